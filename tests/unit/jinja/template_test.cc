// server/jinja's Template against what jinja2 (in transformers' environment) gives for the same
// template: the expected texts below are jinja2 3.1's renderings, and the error texts its
// messages (with our "template line N: " in front).
#include "server/jinja/template.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace slotserve::server::jinja {
namespace {

std::string Render(const std::string& source, const nlohmann::ordered_json& variables = {}) {
  absl::StatusOr<Template> compiled = Template::Compile(source, "template");
  if (!compiled.ok()) return "compile error: " + std::string(compiled.status().message());
  absl::StatusOr<std::string> rendered =
      compiled->Render(variables.is_null() ? nlohmann::ordered_json::object() : variables);
  if (!rendered.ok()) return "render error: " + std::string(rendered.status().message());
  return *rendered;
}

const nlohmann::ordered_json kConversation = nlohmann::ordered_json::parse(R"({
  "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
               {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}]})");

TEST(JinjaTemplate, TrimBlocksAndLstripBlocksAsTransformersSetsThem) {
  EXPECT_EQ(Render("a\n  {% if true %}\n    b\n  {% endif %}\nc"), "a\n    b\nc");
  EXPECT_EQ(Render("x  {{- ' y ' -}}  z"), "x y z");
  EXPECT_EQ(Render("  {%+ if true %}k{% endif %}"), "  k");
  EXPECT_EQ(Render("one\n"), "one");  // keep_trailing_newline is off
  EXPECT_EQ(Render("a {# note #}\nb"), "a b");
  EXPECT_EQ(Render("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
}

TEST(JinjaTemplate, LoopVariablesFiltersAndElse) {
  EXPECT_EQ(Render("{% for m in messages %}{{ loop.index }}{{ loop.first }}{{ loop.last }}"
                   "{{ loop.revindex }},{% endfor %}",
                   kConversation),
            "1TrueFalse4,2FalseFalse3,3FalseFalse2,4FalseTrue1,");
  EXPECT_EQ(Render("{% for m in messages if m.role == 'user' %}{{ m.content }}"
                   "{{ loop.length }}{% endfor %}",
                   kConversation),
            "U12U22");
  EXPECT_EQ(Render("{% for x in [] %}x{% else %}none{% endfor %}"), "none");
  EXPECT_EQ(Render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}"), "a1b2");
  EXPECT_EQ(Render("{% for i in range(9) %}{% if i == 1 %}{% continue %}{% endif %}"
                   "{% if i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
            "023");
}

TEST(JinjaTemplate, ScopesAsJinja2HasThem) {
  // A for loop assigns in its own scope; a namespace carries state out of it.
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in range(3) %}{% set x = x + i %}{% endfor %}{{ x }}"),
            "1");
  EXPECT_EQ(Render("{% set ns = namespace(n=0) %}{% for i in range(3) %}"
                   "{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "3");
  EXPECT_EQ(Render("{% if true %}{% set y = 2 %}{% endif %}{{ y }}"), "2");
}

TEST(JinjaTemplate, ExpressionsWithPythonSemantics) {
  EXPECT_EQ(Render("{{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 0.1 + 0.2 }}"),
            "-4 2 3.5 1024 0.30000000000000004");
  EXPECT_EQ(Render("{{ 'abc'[::-1] }} {{ [1, 2, 3][1:] }} {{ 'b' in 'abc' }} {{ 1 == 1.0 }}"),
            "cba [2, 3] True True");
  EXPECT_EQ(Render("{{ {'a': [1, none, true], 'b': \"it's\"} }}"),
            "{'a': [1, None, True], 'b': \"it's\"}");
  EXPECT_EQ(Render("{{ 'x' if false }}|{{ 1 ~ none }}|{{ 1e16 }} {{ 1e-5 }}"),
            "|1None|1e+16 1e-05");
}

TEST(JinjaTemplate, TojsonIsPythonsJsonDumps) {
  const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(
      R"({"tools": [{"name": "f", "parameters": {"z": 1.0, "a": "ü"}}]})");
  EXPECT_EQ(Render("{{ tools | tojson }}", tools),
            R"([{"name": "f", "parameters": {"z": 1.0, "a": "ü"}}])");
  EXPECT_EQ(Render("{{ tools[0].parameters | tojson(indent=2, sort_keys=true) }}", tools),
            "{\n  \"a\": \"ü\",\n  \"z\": 1.0\n}");
  EXPECT_EQ(Render("{{ '<\"é\">' | tojson(ensure_ascii=true) }}"), R"("<\"\u00e9\">")");
}

TEST(JinjaTemplate, StringMethodsAndFilters) {
  EXPECT_EQ(Render("{{ '  a b  '.strip() }}|{{ 'a,b'.split(',') }}|{{ 'Ab'.startswith('A') }}|"
                   "{{ 'ab' | upper }}|{{ ' t ' | trim }}|{{ [1, 2] | join('-') }}|"
                   "{{ messages | map(attribute='role') | first }}|"
                   "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|"
                   "{{ nothing | default('d') }}|{{ 'a\nb' | indent(2) }}",
                   kConversation),
            "a b|['a', 'b']|True|AB|t|1-2|system|2|d|a\n  b");
}

TEST(JinjaTemplate, MacrosAndCallBlocks) {
  EXPECT_EQ(Render("{% macro m(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}"),
            "1B12");
  EXPECT_EQ(Render("{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}"),
            "<in>");
}

TEST(JinjaTemplate, UndefinedAsJinja2sDefault) {
  EXPECT_EQ(Render("[{{ nothing }}]{{ nothing is defined }}{{ messages[0].nope is defined }}",
                   kConversation),
            "[]FalseFalse");
  EXPECT_EQ(Render("{% for x in nothing %}x{% endfor %}{{ nothing | length }}"), "0");
  EXPECT_EQ(Render("{{ nothing.attr }}"), "render error: template line 1: 'nothing' is undefined");
  EXPECT_EQ(Render("\n{{ messages[0].nope.deeper }}", kConversation),
            "render error: template line 2: 'dict object' has no attribute 'nope'");
}

TEST(JinjaTemplate, ErrorsNameTheLineAndWhatFailed) {
  EXPECT_EQ(Render("{% if messages[0].role == 'system' %}\n\n"
                   "{{ raise_exception('System role not supported') }}{% endif %}",
                   kConversation),
            "render error: template line 3: System role not supported");
  EXPECT_EQ(Render("a\n{% for x in y %}"),
            "compile error: template line 2: unexpected end of template, expected 'else' or "
            "'endfor'");
  EXPECT_EQ(Render("{% frobnicate %}"),
            "compile error: template line 1: encountered unknown tag 'frobnicate'");
  EXPECT_EQ(Render("{{ 'a' + 1 }}"),
            "render error: template line 1: unsupported operand type(s) for +: 'str object' and "
            "'int object'");
  // jinja2 refuses an unknown filter or test when it compiles the template.
  EXPECT_EQ(Render("\n{{ x | nosuchfilter }}"),
            "compile error: template line 2: no filter named 'nosuchfilter'");
  EXPECT_EQ(Render("{{ x is nosuchtest }}"),
            "compile error: template line 1: no test named 'nosuchtest'");
}

TEST(JinjaTemplate, VariablesMustBeAnObject) {
  absl::StatusOr<Template> compiled = Template::Compile("x", "t");
  ASSERT_TRUE(compiled.ok());
  EXPECT_FALSE(compiled->Render(nlohmann::ordered_json::array()).ok());
}

}  // namespace
}  // namespace slotserve::server::jinja
