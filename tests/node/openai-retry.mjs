// openai-retry.mjs BASE_URL - one chat completion (not streamed) from
// ttsbuf serve with the official openai SDK and its own retries
// (maxRetries 4: a 429 is retried after the Retry-After the server sent),
// and prints one JSON line: the length of the answer's text.
// Exit status: 0 when the completion came, 1 otherwise (the error on stderr).
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "sk-not-a-real-key", maxRetries: 4 });

try {
  const c = await client.chat.completions.create({
    model: "ttsbuf-mock",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 5,
  });
  console.log(JSON.stringify({ chars: c.choices[0].message.content.length }));
} catch (err) {
  console.error(`openai-retry: ${err}`);
  process.exit(1);
}
