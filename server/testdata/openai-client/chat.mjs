// Streams one chat completion from an orc server with the official OpenAI
// SDK and prints a JSON summary: the concatenated content, the number of
// content chunks and the finish reason. Usage: node chat.mjs BASE_URL [MODEL]
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.argv[2], apiKey: "test-key", maxRetries: 0 });
const stream = await client.chat.completions.create({
  model: process.argv[3] ?? "orc",
  messages: [{ role: "user", content: "Write a haiku about GPUs." }],
  stream: true,
  max_tokens: 12,
  temperature: 0,
  seed: 42,
});
let content = "";
let chunks = 0;
let finish = null;
let role = null;
for await (const chunk of stream) {
  const choice = chunk.choices[0];
  if (choice.delta.role) role = choice.delta.role;
  if (choice.delta.content) {
    content += choice.delta.content;
    chunks++;
  }
  if (choice.finish_reason) finish = choice.finish_reason;
}
console.log(JSON.stringify({ role, content, chunks, finish }));
