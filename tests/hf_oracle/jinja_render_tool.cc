// The oracle test's view of server/jinja: reads a JSON array of cases from stdin, each
// {"template": TEXT, "variables": OBJECT}, renders each with slotserve::server::jinja::Template
// and writes a JSON array of {"text": RENDERED} or {"error": MESSAGE} to stdout, in order
// (chat_template_oracle_test.py compares them with python3-jinja2's renderings).
#include <iostream>
#include <iterator>
#include <string>

#include "nlohmann/json.hpp"
#include "server/jinja/template.h"

int main() {
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  nlohmann::ordered_json cases;
  try {
    cases = nlohmann::ordered_json::parse(input);
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "jinja_render_tool: stdin is not JSON: " << error.what() << "\n";
    return 2;
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const auto& test_case : cases) {
    auto compiled = slotserve::server::jinja::Template::Compile(
        test_case.at("template").get<std::string>(), "template");
    if (!compiled.ok()) {
      results.push_back({{"error", std::string(compiled.status().message())}});
      continue;
    }
    auto rendered = compiled->Render(test_case.at("variables"));
    if (rendered.ok()) {
      results.push_back({{"text", *rendered}});
    } else {
      results.push_back({{"error", std::string(rendered.status().message())}});
    }
  }
  std::cout << results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
