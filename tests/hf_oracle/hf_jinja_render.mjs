// The second oracle: transformers.js' template engine (@huggingface/jinja, installed by
// install.sh). Reads a JSON array of {"template", "variables"} from stdin and writes a JSON array
// of {"text"} or {"error"}, as jinja_render_tool does (chat_template_oracle_test.py).
import { Template } from "@huggingface/jinja";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const results = JSON.parse(input).map(({ template, variables }) => {
  try {
    return { text: new Template(template).render(variables) };
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
});
process.stdout.write(JSON.stringify(results));
