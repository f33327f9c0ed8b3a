// Built outside the ditto tree against the installed package.
#include <ditto/ditto.h>

#include <iostream>

int main() {
  auto a = ditto::tensor<float>({1, 2, 3});
  auto b = ditto::tensor<float>({4, 5, 6});
  auto c = a + b;
  std::cout << c << "\n";
  return ditto::fingerprint(c) == ditto::fingerprint(c.clone()) ? 0 : 1;
}
