// peer-stream.mjs BASE_URL PROMPT - streams one chat completion with the
// official openai SDK and prints one JSON line: the text it rebuilt, its
// content chunks, the time to the first one (s) and to the last (s).
// ttsbuf's peer test (tests/test_api.c) reads the same server's stream
// and must agree.  Exit status: 0 when the stream completed, 1 otherwise.
import OpenAI from "openai";

const [baseURL, prompt] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "sk-not-a-real-key", maxRetries: 0 });

try {
  const t0 = performance.now();
  const stream = await client.chat.completions.create({
    model: "peer",
    messages: [{ role: "user", content: prompt }],
    stream: true,
  });
  let text = "";
  let chunks = 0;
  let first = null;
  let last = null;
  for await (const chunk of stream) {
    const content = chunk.choices[0]?.delta?.content;
    if (content) {
      const t = (performance.now() - t0) / 1000;
      if (first === null) first = t;
      last = t;
      text += content;
      chunks += 1;
    }
  }
  console.log(JSON.stringify({ text, chunks, ttft: first, last }));
} catch (err) {
  console.error(`peer-stream: ${err}`);
  process.exit(1);
}
