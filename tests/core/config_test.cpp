// config_report() and config_report_json(): the environment report that
// `ditto env` prints, in its two forms.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "ditto/ditto.h"

using namespace ditto;

TEST(Config, ReportNamesEverySetting) {
  std::string r = config_report();
  for (const char* key :
       {"ditto 0.1.0",
        "cpu capability active",
        "threads",
        "deterministic algorithms",
        "fill uninitialized memory",
        "conv benchmark / deterministic",
        "gemm workspace config",
        "Fashion-MNIST"}) {
    EXPECT_NE(r.find(key), std::string::npos) << key;
  }
}

TEST(Config, JsonReportHoldsTheSettingsInForce) {
  const int threads = get_num_threads();
  set_num_threads(3);
  ::setenv("DITTO_CONFIG_TEST", "on", 1);
  nlohmann::json j;
  {
    DeterministicGuard guard(true, true);
    j = nlohmann::json::parse(config_report_json());
  }
  ::unsetenv("DITTO_CONFIG_TEST");
  set_num_threads(threads);

  EXPECT_EQ(j["version"], version());
  EXPECT_TRUE(j["build"] == "release" || j["build"] == "debug") << j["build"];
  EXPECT_EQ(j["threads"], 3);
  EXPECT_EQ(j["determinism"]["deterministic_algorithms"], true);
  EXPECT_EQ(j["determinism"]["warn_only"], true);
  EXPECT_TRUE(j["determinism"]["debug_mode"].is_number_integer());
  EXPECT_TRUE(j["determinism"]["fill_uninitialized_memory"].is_boolean());

  const nlohmann::json& caps = j["cpu_capabilities"];
  ASSERT_FALSE(caps["compiled"].empty());
  EXPECT_EQ(caps["compiled"][0], "scalar");
  EXPECT_EQ(
      caps["active"], std::string(cpu_capability_name(get_cpu_capability())));
  ASSERT_EQ(caps["supported"].size(), supported_cpu_capabilities().size());
  for (size_t i = 0; i < caps["supported"].size(); ++i) {
    EXPECT_EQ(
        caps["supported"][i],
        std::string(cpu_capability_name(supported_cpu_capabilities()[i])));
  }

  EXPECT_EQ(j["conv"]["benchmark"], backends::conv::benchmark());
  EXPECT_EQ(j["conv"]["benchmark_limit"], backends::conv::benchmark_limit());
  EXPECT_EQ(j["gemm"]["workspace_bytes"], backends::gemm::workspace_bytes());
  EXPECT_EQ(j["environment"]["DITTO_CONFIG_TEST"], "on");
  EXPECT_EQ(j["data"]["fashion_mnist"], data::kFashionMNISTRoot);
  EXPECT_TRUE(j["data"]["found"].is_boolean());
  EXPECT_EQ(j["trace"], trace::active_path());

  // The report in force now, not the one at parse time.
  const nlohmann::json now = nlohmann::json::parse(config_report_json());
  EXPECT_EQ(now["threads"], threads);
  EXPECT_FALSE(now["environment"].contains("DITTO_CONFIG_TEST"));
}

TEST(Config, TextAndJsonAgree) {
  const nlohmann::json j = nlohmann::json::parse(config_report_json());
  const std::string r = config_report();
  EXPECT_NE(
      r.find(
          "threads:                         " +
          std::to_string(j["threads"].get<int>()) + "\n"),
      std::string::npos)
      << r;
  EXPECT_NE(
      r.find(
          "cpu capability active:           " +
          j["cpu_capabilities"]["active"].get<std::string>() + "\n"),
      std::string::npos)
      << r;
}
