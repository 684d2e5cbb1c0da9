// openai-speech.mjs BASE_URL - asks ttsbuf's mock TTS for speech with the
// official openai SDK (client.audio.speech.create, response_format pcm),
// reads the whole body, and prints one JSON line: the bytes read and the
// bytes the mock said it sent (its X-Ttsbuf-Audio-Bytes header).
// Exit status: 0 when the body was read, 1 otherwise.
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "sk-not-a-real-key", maxRetries: 0 });

try {
  const response = await client.audio.speech.create({
    model: "tts-1",
    voice: "alloy",
    input: "The official SDK reads the mock's speech.",
    response_format: "pcm",
  });
  const body = Buffer.from(await response.arrayBuffer());
  const said = Number(response.headers.get("x-ttsbuf-audio-bytes"));
  console.log(JSON.stringify({ bytes: body.length, said, type: response.headers.get("content-type") }));
} catch (err) {
  console.error(`openai-speech: ${err}`);
  process.exit(1);
}
