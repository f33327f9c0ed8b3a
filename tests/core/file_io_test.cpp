// What ditto's file writes may replace and what its readers accept (issue
// 32): a FIFO or device is written in place, never renamed over; a symlink
// is followed, not replaced; a directory is refused by readers and writers;
// JSON read from files has a depth and a size limit. Every test works in its
// own temporary directory (none touches /dev).

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "ditto/core/error.h"
#include "ditto/core/file_io.h"
#include "ditto/core/json_read.h"
#include "ditto/data/loader.h"
#include "tests/error_of.h"

namespace ditto {
namespace {

namespace fs = std::filesystem;
// The ValueError's message (another error type fails the test).
const auto error_of = [](const auto& f) {
  return test::error_of<ValueError>(f);
};

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
        ("ditto_file_io_" + std::to_string(::getpid()) + "_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    fs::remove_all(path);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

bool is_a_fifo(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

TEST(AtomicWrite, AFifoIsWrittenInPlaceNeverReplaced) {
  TempDir d;
  const fs::path fifo = d.path / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No reader: a clear error at once (not a write that waits forever), and
  // the FIFO is still a FIFO.
  const std::string e =
      error_of([&] { detail::write_file_atomic(fifo, "x", "test_op"); });
  EXPECT_NE(
      e.find(
          "[test_op] cannot write " + fifo.string() +
          ": no process has the FIFO open for reading"),
      std::string::npos)
      << e;
  EXPECT_TRUE(is_a_fifo(fifo));
  // With a reader: the bytes arrive through the FIFO.
  std::string got;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[64];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
      got.append(buf, size_t(n));
    }
    ::close(fd);
  });
  // The reader opens in its own time: retry while nobody reads yet.
  for (int tries = 0;; ++tries) {
    try {
      detail::write_file_atomic(fifo, "hello fifo", "test_op");
      break;
    } catch (const ValueError&) {
      ASSERT_LT(tries, 2000);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  reader.join();
  EXPECT_EQ(got, "hello fifo");
  EXPECT_TRUE(is_a_fifo(fifo));
  EXPECT_EQ(
      std::distance(fs::directory_iterator(d.path), fs::directory_iterator()),
      1); // no temporary left beside it
}

TEST(AtomicWrite, ASymlinkIsFollowedAndStaysALink) {
  TempDir d;
  fs::create_directories(d.path / "real");
  const fs::path target = d.path / "real" / "file.json";
  std::ofstream(target) << "old";
  const fs::path link = d.path / "link.json";
  fs::create_symlink("real/file.json", link); // relative, as users make them
  detail::write_file_atomic(link, "new", "test_op");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real/file.json"));
  EXPECT_EQ(slurp(target), "new");
  // A dangling link: the file it names is created, the link stays.
  const fs::path dangling = d.path / "dangling";
  fs::create_symlink("real/later.json", dangling);
  detail::write_file_atomic(dangling, "made", "test_op");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(slurp(d.path / "real" / "later.json"), "made");
  // A loop is an error, not a hang.
  fs::create_symlink("loop_b", d.path / "loop_a");
  fs::create_symlink("loop_a", d.path / "loop_b");
  const std::string e = error_of(
      [&] { detail::write_file_atomic(d.path / "loop_a", "x", "test_op"); });
  EXPECT_NE(e.find("too many levels of symbolic links"), std::string::npos)
      << e;
}

// A NUL inside a path would cut it there: "victim\0.bak" would replace
// victim. Refused before any file is touched, as Python's open refuses it.
TEST(AtomicWrite, APathWithANulByteIsRefusedAndNothingChanges) {
  TempDir d;
  const fs::path victim = d.path / "victim";
  { std::ofstream(victim) << "precious"; }
  const std::string bad = victim.string() + std::string(1, '\0') + ".bak";
  ASSERT_EQ(bad.size(), victim.string().size() + 5);
  const std::string msg =
      error_of([&] { detail::write_file_atomic(bad, "new bytes", "op"); });
  EXPECT_NE(msg.find("embedded null byte"), std::string::npos) << msg;
  EXPECT_NE(msg.find("victim\\0.bak"), std::string::npos) << msg;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_NE(
      error_of([&] {
        detail::read_regular_file(bad, "op");
      }).find("embedded null byte"),
      std::string::npos);
  EXPECT_NE(
      error_of([&] {
        detail::check_regular_file(bad, "op");
      }).find("embedded null byte"),
      std::string::npos);
  EXPECT_EQ(fs::directory_iterator(d.path)->path(), victim);
}

TEST(AtomicWrite, ADirectoryIsRefusedAndUnchanged) {
  TempDir d;
  fs::create_directories(d.path / "dir");
  std::ofstream(d.path / "dir" / "inside") << "keep";
  const std::string e = error_of(
      [&] { detail::write_file_atomic(d.path / "dir", "x", "test_op"); });
  EXPECT_NE(e.find("it is a directory"), std::string::npos) << e;
  EXPECT_EQ(slurp(d.path / "dir" / "inside"), "keep");
}

TEST(ReadRegularFile, RefusesWhatIsNotAFileAndWhatIsTooLarge) {
  TempDir d;
  std::ofstream(d.path / "f") << "0123456789";
  EXPECT_EQ(detail::read_regular_file(d.path / "f", "test_op"), "0123456789");
  std::string e =
      error_of([&] { detail::read_regular_file(d.path / "f", "test_op", 9); });
  EXPECT_NE(e.find("the file has 10 bytes, more than the 9"), std::string::npos)
      << e;
  e = error_of([&] { detail::read_regular_file(d.path, "test_op"); });
  EXPECT_NE(e.find("it is a directory, not a regular file"), std::string::npos)
      << e;
  ASSERT_EQ(::mkfifo((d.path / "pipe").c_str(), 0600), 0);
  // A FIFO without a writer: refused at once, not waited on.
  e = error_of([&] { detail::read_regular_file(d.path / "pipe", "test_op"); });
  EXPECT_NE(e.find("it is a FIFO, not a regular file"), std::string::npos) << e;
  e = error_of([&] { detail::check_regular_file(d.path / "pipe", "test_op"); });
  EXPECT_NE(e.find("it is a FIFO, not a regular file"), std::string::npos) << e;
  e = error_of([&] { detail::read_regular_file(d.path / "none", "test_op"); });
  EXPECT_NE(e.find("No such file or directory"), std::string::npos) << e;
}

// 100,000 levels of '[' used to overflow the stack in the recursive copy
// and dump after parsing (issue 32, defect 1).
TEST(JsonRead, DeepNestingAndSizeAreRefusedWithTheSource) {
  const std::string deep(100000, '[');
  std::string e =
      error_of([&] { detail::parse_json(deep, "test_op", "some.json"); });
  EXPECT_EQ(e, "[test_op] some.json: JSON nests deeper than 64 levels");
  std::string ok;
  for (int i = 0; i < 64; ++i) {
    ok += "[";
  }
  ok += std::string(64, ']');
  EXPECT_NO_THROW(detail::parse_json(ok, "test_op", "x"));
  // Brackets inside strings do not count.
  EXPECT_NO_THROW(
      detail::parse_json("{\"k\":\"" + deep + "\"}", "test_op", "x"));
  e = error_of([&] { detail::parse_json("[1,2]", "test_op", "x", 4); });
  EXPECT_NE(
      e.find("JSON of 5 bytes, more than the 4 accepted"), std::string::npos)
      << e;
  e = error_of([&] { detail::parse_json("{", "test_op", "x"); });
  EXPECT_NE(e.find("[test_op] x: invalid JSON"), std::string::npos) << e;
  // A loader state (a checkpoint's "loader" field) of deep nesting.
  e = error_of([&] { data::LoaderState::from_json(deep); });
  EXPECT_NE(e.find("JSON nests deeper than 64 levels"), std::string::npos) << e;
}

} // namespace
} // namespace ditto
