// openai-stream.mjs BASE_URL - streams one chat completion from ttsbuf's
// mock provider with the official openai SDK, the way the TPS article's
// benchmark script does, and prints one JSON line: the text it got, how
// many content chunks, and the usage the server reported.
// Exit status: 0 when the stream completed, 1 otherwise.
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "sk-not-a-real-key", maxRetries: 0 });

try {
  const stream = await client.chat.completions.create({
    model: "ttsbuf-mock",
    messages: [{ role: "user", content: "Explain gradient descent." }],
    max_tokens: 200,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let chunks = 0;
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta?.content) {
      text += choice.delta.content;
      chunks += 1;
    }
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  console.log(JSON.stringify({ text, chunks, usage, finish }));
} catch (err) {
  console.error(`openai-stream: ${err}`);
  process.exit(1);
}
