#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// The start-up probe of Note [The device's arithmetic]: v[3] =
// fma(v[0], v[1], v[2]) and v[7] = v[4] * v[5].
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer V { float v[]; };
void main() {
  precise float f = fma(v[0], v[1], v[2]);
  precise float m = v[4] * v[5];
  v[3] = f;
  v[7] = m;
}
