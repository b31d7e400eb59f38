// The HTML certificate in a real browser: headless Chromium opens it from a file with the
// network unused, its inline script must run to the end (body data-ready="1") and the console
// must stay silent. A page with a broken script is shown to fail the same checks. Skips when
// chromium is not installed (Debian package chromium, see ci/install-deps.sh).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "report/html_report.h"
#include "report/tests/sample_certificate.h"

namespace attnv::report {
namespace {

namespace fs = std::filesystem;

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(p)) return p;
  return "";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Page {
  std::string dom, log;
};

// Loads the page headless; --dump-dom prints the DOM after the load event (scripts have run).
Page render(const std::string& name, const std::string& html) {
  const fs::path dir = fs::temp_directory_path() / ("attnv_report_render_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path page = dir / "certificate.html";
  std::ofstream(page, std::ios::binary) << html;
  const std::string cmd = "timeout 90 " + chromium() +
                          " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions"
                          " --user-data-dir=" + (dir / "profile").string() +
                          " --enable-logging=stderr --v=0 --dump-dom file://" + page.string() + " > " +
                          (dir / "dom.html").string() + " 2> " + (dir / "log.txt").string();
  const int st = std::system(cmd.c_str());
  Page p{slurp(dir / "dom.html"), slurp(dir / "log.txt")};
  std::error_code ignored;
  fs::remove_all(dir / "profile", ignored);  // the page, DOM and log stay for a look
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << name << ": chromium failed:\n" << p.log;
  std::cout << name << ": " << page.string() << " (" << html.size() << " bytes, DOM " << p.dom.size() << " bytes)\n";
  return p;
}

bool has_console_message(const std::string& log) {
  return log.find("CONSOLE") != std::string::npos || log.find("Uncaught") != std::string::npos;
}

TEST(ReportRender, ChromiumRunsThePageScriptWithoutErrors) {
  if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium); page not rendered";
  for (const auto& [name, cert] : {std::pair{"mutant", testing::mutant_certificate(20261121)},
                                   std::pair{"naive", testing::naive_certificate(20261121)}}) {
    const Page p = render(name, to_html(cert));
    EXPECT_NE(p.dom.find("data-ready=\"1\""), std::string::npos) << name << ": the page script did not finish\n" << p.log;
    EXPECT_NE(p.dom.find("<svg class=\"chart scatter\""), std::string::npos) << name;
    EXPECT_FALSE(has_console_message(p.log)) << name << ": console output:\n" << p.log;
  }
}

TEST(ReportRender, ABrokenScriptIsCaught) {
  if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium); page not rendered";
  std::string html = to_html(testing::mutant_certificate(20261121));
  const std::size_t at = html.find("<script>");
  ASSERT_NE(at, std::string::npos);
  html.insert(at + 8, "no_such_function();");
  const Page p = render("broken", html);
  EXPECT_EQ(p.dom.find("data-ready=\"1\""), std::string::npos);
  EXPECT_TRUE(has_console_message(p.log)) << p.log;
}

}  // namespace
}  // namespace attnv::report
