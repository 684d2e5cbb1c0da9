// openai-tools.mjs BASE_URL - asks ttsbuf's mock for a chat completion
// that offers a tool, streamed, with the official openai SDK's stream
// helper (beta.chat.completions.stream), which puts the tool_calls deltas
// back together; prints one JSON line: the final message's tool calls
// (id, name, arguments parsed as JSON), its content and finish reason.
// Exit status: 0 when the stream completed, 1 otherwise.
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "sk-not-a-real-key", maxRetries: 0 });

try {
  const stream = client.beta.chat.completions.stream({
    model: "ttsbuf-mock",
    messages: [{ role: "user", content: "What is the weather?" }],
    tools: [
      {
        type: "function",
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { query: { type: "string" } } },
        },
      },
    ],
    stream: true,
  });
  const done = await stream.finalChatCompletion();
  const choice = done.choices[0];
  const calls = (choice.message.tool_calls ?? []).map((c) => ({
    id: c.id,
    name: c.function.name,
    args: JSON.parse(c.function.arguments),
  }));
  console.log(
    JSON.stringify({ calls, content: choice.message.content, finish: choice.finish_reason }),
  );
} catch (err) {
  console.error(`openai-tools: ${err}`);
  process.exit(1);
}
