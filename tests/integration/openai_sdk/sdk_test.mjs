// The official openai npm SDK against a real slotserve-server (--http-listen): completions and
// chat, whole and streamed, echo and logit_bias, errors as the SDK's typed exceptions, the
// model list, and a stream the client aborts, which must free its slot.
//
//   node --test sdk_test.mjs  (with SLOTSERVE_SERVER, SLOTSERVE_MODEL set; CTest does it)
//
// Without the SDK (install.sh not run, or npm unreachable) the test is skipped (exit 77),
// except under CI=true, where a missing SDK is a failure.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

let OpenAI;
try {
  ({ default: OpenAI } = await import('openai'));
} catch (error) {
  const why = `the openai SDK is not installed (${error.code ?? error.message}); ` +
              'run tests/integration/openai_sdk/install.sh';
  if (process.env.CI === 'true') {
    console.error(`FAIL: ${why}`);
    process.exit(1);
  }
  console.log(`SKIPPED: ${why}`);
  process.exit(77);
}

const server = process.env.SLOTSERVE_SERVER;
const model = process.env.SLOTSERVE_MODEL;
assert.ok(server && model, 'set SLOTSERVE_SERVER and SLOTSERVE_MODEL');

let child;
let log = '';
let client;
let metricsPort;

// Starts the server on free ports and resolves once its start-up line is out.
function startServer() {
  return new Promise((resolve, reject) => {
    child = spawn(server, [`--model=${model}`, '--listen=127.0.0.1:0',
      '--metrics-listen=127.0.0.1:0', '--http-listen=127.0.0.1:0', '--threads=1',
      '--max-slots=4', '--max-new-tokens-limit=200000']);
    const timer = setTimeout(() => reject(new Error(`no start-up line in 60 s:\n${log}`)), 60000);
    child.stderr.on('data', (data) => {
      log += data;
      const http = log.match(/HTTP API on http:\/\/([0-9.]+:[0-9]+)/);
      const main = log.match(/metrics on http:\/\/[0-9.]+:([0-9]+)/);
      if (http && main) {
        clearTimeout(timer);
        metricsPort = Number(main[1]);
        resolve(`http://${http[1]}/v1`);
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${log}`)));
  });
}

async function metric(series) {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function waitFor(condition, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

before(async () => {
  const baseURL = await startServer();
  // The server has no keys; the SDK insists on one. No retries: a test sees every answer.
  client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, `server did not exit 0 on SIGTERM:\n${log}`);
});

const greedy = { temperature: 0, max_tokens: 16, ignore_eos: true };

test('completions: whole and streamed give the same greedy text', async () => {
  const whole = await client.completions.create({ model: 'tiny-abc', prompt: 'In the beginning',
    ...greedy });
  assert.equal(whole.object, 'text_completion');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 16);
  assert.ok(whole.choices[0].text.length > 0);

  const stream = await client.completions.create({ model: 'tiny-abc', prompt: 'In the beginning',
    ...greedy, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage;
  let finish;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices.length > 0) {
      text += chunk.choices[0].text;
      finish = chunk.choices[0].finish_reason ?? finish;
    }
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, 'length');
  assert.deepEqual(usage, whole.usage);
});

// What evaluation harnesses send to score a text (lm-evaluation-harness's loglikelihood):
// echo the prompt with its tokens' log probabilities. The prompt's last token must score as it
// did when the server generated it after the rest.
test('completions: echo with logprobs scores the prompt as generation scores its tokens',
  async () => {
    const prompt = 'In the beginning God';
    const first = await client.completions.create({ model: 'tiny-abc', prompt, max_tokens: 1,
      temperature: 0, logprobs: 0, ignore_eos: true });
    const next = first.choices[0];
    const extended = prompt + next.text;
    const scored = await client.completions.create({ model: 'tiny-abc', prompt: extended,
      max_tokens: 1, temperature: 0, logprobs: 1, echo: true, ignore_eos: true });
    const choice = scored.choices[0];
    assert.ok(choice.text.startsWith(extended), choice.text);
    const { tokens, token_logprobs: logprobs, text_offset: offsets } = choice.logprobs;
    const promptTokens = scored.usage.prompt_tokens;
    assert.equal(tokens.length, promptTokens + 1);
    assert.equal(logprobs[0], null);
    assert.ok(Math.abs(logprobs[promptTokens - 1] - next.logprobs.token_logprobs[0]) < 1e-4,
      `${logprobs[promptTokens - 1]} against ${next.logprobs.token_logprobs[0]}`);
    assert.equal(tokens.join(''), choice.text);
    tokens.forEach((token, i) => assert.equal(choice.text.substr(offsets[i], token.length), token));
  });

test('completions: a batch of prompts scores each as it is scored alone (lm-eval batches)',
  async () => {
    const prompts = ['In the beginning God created', 'And the earth was'];
    const request = { model: 'tiny-abc', max_tokens: 1, temperature: 0, logprobs: 0,
      echo: true, ignore_eos: true };
    const batch = await client.completions.create({ ...request, prompt: prompts });
    assert.deepEqual(batch.choices.map((c) => c.index), [0, 1]);
    let promptTokens = 0;
    for (const [i, prompt] of prompts.entries()) {
      const alone = await client.completions.create({ ...request, prompt });
      promptTokens += alone.usage.prompt_tokens;
      assert.equal(batch.choices[i].text, alone.choices[0].text);
      assert.deepEqual(batch.choices[i].logprobs.tokens, alone.choices[0].logprobs.tokens);
      batch.choices[i].logprobs.token_logprobs.forEach((logprob, t) => {
        const want = alone.choices[0].logprobs.token_logprobs[t];
        assert.ok(t === 0 ? logprob === null : Math.abs(logprob - want) < 1e-5, `${i}/${t}`);
      });
    }
    assert.equal(batch.usage.prompt_tokens, promptTokens);
  });

test('chat: whole and streamed give the same greedy reply', async () => {
  const messages = [{ role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'Who made the light?' }];
  const whole = await client.chat.completions.create({ model: 'tiny-abc', messages,
    temperature: 0, max_completion_tokens: 12, logprobs: true, top_logprobs: 2 });
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(whole.choices[0].logprobs.content[0].top_logprobs.length, 2);

  const stream = await client.chat.completions.create({ model: 'tiny-abc', messages,
    temperature: 0, max_completion_tokens: 12, stream: true });
  let content = '';
  let role;
  for await (const chunk of stream) {
    role ??= chunk.choices[0]?.delta?.role;
    content += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(role, 'assistant');
  assert.equal(content, whole.choices[0].message.content);
});

test('chat: logit_bias of -100 on the greedy token gives the runner-up', async () => {
  const messages = [{ role: 'user', content: 'Who made the light?' }];
  const request = { model: 'tiny-abc', messages, temperature: 0, max_completion_tokens: 1,
    logprobs: true, top_logprobs: 3, return_token_ids: true };
  const plain = await client.chat.completions.create(request);
  const greedy = plain.choices[0].token_ids[0];
  const [first] = plain.choices[0].logprobs.content;
  const runnerUp = first.top_logprobs.filter((entry) => entry.token !== first.token)
    .reduce((best, entry) => (entry.logprob > best.logprob ? entry : best));
  const banned = await client.chat.completions.create(
    { ...request, logit_bias: { [greedy]: -100 } });
  const [other] = banned.choices[0].logprobs.content;
  assert.notEqual(banned.choices[0].token_ids[0], greedy);
  assert.equal(other.token, runnerUp.token);
  assert.ok(Math.abs(other.logprob - runnerUp.logprob) < 1e-4,
    `${other.logprob} against ${runnerUp.logprob}: logprobs stay the raw distribution's`);
});

test('n choices: one per index, streamed under their index too', async () => {
  const messages = [{ role: 'user', content: 'Who made the light?' }];
  const whole = await client.chat.completions.create({ model: 'tiny-abc', messages,
    temperature: 1, seed: 11, max_completion_tokens: 10, n: 2 });
  assert.deepEqual(whole.choices.map((c) => c.index), [0, 1]);
  const stream = await client.chat.completions.create({ model: 'tiny-abc', messages,
    temperature: 1, seed: 11, max_completion_tokens: 10, n: 2, stream: true });
  const contents = ['', ''];
  for await (const chunk of stream) {
    for (const choice of chunk.choices) contents[choice.index] += choice.delta?.content ?? '';
  }
  assert.deepEqual(contents, whole.choices.map((c) => c.message.content));
});

test('errors arrive as the SDK\'s typed exceptions naming the parameter', async () => {
  await assert.rejects(
    client.completions.create({ model: 'tiny-abc', prompt: 'x', temperature: -1 }),
    (error) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.status, 400);
      assert.equal(error.param, 'temperature');
      assert.match(error.message, /temperature must be >= 0.*got -1/);
      return true;
    });
  await assert.rejects(
    client.chat.completions.create({ model: 'tiny-abc', messages: [{ role: 'user', content: 'x' }],
      n: 100 }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'n');
  await assert.rejects(
    client.completions.create({ model: 'gpt-4', prompt: 'x' }),
    (error) => error instanceof OpenAI.NotFoundError && error.code === 'model_not_found');
});

test('models.list names the served model', async () => {
  const ids = [];
  for await (const entry of client.models.list()) ids.push(entry.id);
  assert.deepEqual(ids, ['tiny-abc']);
});

test('aborting a stream frees its slot', async () => {
  const cancelledBefore = (await metric('slotserve_requests_total{outcome="cancelled"}')) ?? 0;
  const stream = await client.completions.create({ model: 'tiny-abc', prompt: 'In the beginning',
    temperature: 0, max_tokens: 200000, ignore_eos: true, stream: true });
  let chunks = 0;
  for await (const chunk of stream) {
    assert.ok(chunk.choices.length > 0);
    if (++chunks === 5) break;  // leaving the loop aborts the request
  }
  assert.ok(await waitFor(async () =>
    (await metric('slotserve_requests_total{outcome="cancelled"}')) === cancelledBefore + 1 &&
    (await metric('slotserve_state_slots_used')) === 0, 10000), 'the slot was not freed');
});
