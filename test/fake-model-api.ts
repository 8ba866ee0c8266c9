// A stand-in model API on 127.0.0.1 for driving the real agent hosts (test/hosts-e2e.test.ts):
// it records every request and answers in each host's own wire format, streamed as the hosts
// ask for it.
// - Claude Code (ANTHROPIC_BASE_URL): the Anthropic Messages API, POST /v1/messages, SSE events
//   message_start … content_block_* … message_delta, message_stop.
// - Codex (a model_providers entry with wire_api = "responses"): the OpenAI Responses API,
//   POST /v1/responses, SSE events response.created, response.output_item.done,
//   response.completed.
// What the model says is decided per request by a `brain` from the request body alone, so a
// host that retries or sends an extra request gets a consistent answer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One model turn: text, or one tool call. */
export type Turn =
  | { text: string }
  | { tool: string; input: unknown }
  /** Codex only: an output item as is (e.g. a tool_search_call or a custom_tool_call). */
  | { item: Record<string, unknown> };

export type Wire = 'anthropic' | 'responses';
export type Brain = (body: Record<string, unknown>, wire: Wire) => Turn;

export interface Recorded {
  wire: Wire;
  url: string;
  body: Record<string, unknown>;
  /** The body as received, for "does the model see X" checks. */
  text: string;
}

export interface FakeModel {
  url: string;
  requests: Recorded[];
  brain: Brain;
  close: () => Promise<void>;
}

export async function startFakeModel(): Promise<FakeModel> {
  const model: FakeModel = {
    url: '',
    requests: [],
    brain: () => ({ text: 'ok' }),
    close: async () => undefined,
  };
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        /* a HEAD or an empty probe */
      }
      const url = req.url ?? '';
      const wire: Wire | null =
        req.method !== 'POST'
          ? null
          : /^\/v1\/messages(\?|$)/.test(url)
            ? 'anthropic'
            : /\/responses(\?|$)/.test(url)
              ? 'responses'
              : null;
      if (wire === null) {
        res.writeHead(req.method === 'HEAD' ? 200 : 404, { 'content-type': 'application/json' });
        res.end(req.method === 'HEAD' ? undefined : '{"error":"not served by the fake model"}');
        return;
      }
      model.requests.push({ wire, url, body, text });
      const turn = model.brain(body, wire);
      const id = ++n;
      if (wire === 'anthropic') anthropic(res, body, turn, id);
      else responses(res, turn, id);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  model.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return model;
}

const sse = (res: http.ServerResponse, type: string, data: Record<string, unknown>) =>
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);

function anthropic(
  res: http.ServerResponse,
  body: Record<string, unknown>,
  turn: Turn,
  id: number,
): void {
  const usage = { input_tokens: 10, output_tokens: 5 };
  const block =
    'tool' in turn
      ? { type: 'tool_use', id: `toolu_${id}`, name: turn.tool, input: turn.input }
      : { type: 'text', text: 'text' in turn ? turn.text : '' };
  const stop = 'tool' in turn ? 'tool_use' : 'end_turn';
  const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model: body.model };
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...message,
        content: [block],
        stop_reason: stop,
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'message_start', {
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage },
  });
  if (block.type === 'tool_use') {
    sse(res, 'content_block_start', { index: 0, content_block: { ...block, input: {} } });
    sse(res, 'content_block_delta', {
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
    });
  } else {
    sse(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: block.text } });
  }
  sse(res, 'content_block_stop', { index: 0 });
  sse(res, 'message_delta', {
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  sse(res, 'message_stop', {});
  res.end();
}

function responses(res: http.ServerResponse, turn: Turn, id: number): void {
  const item =
    'item' in turn
      ? { id: `item_${id}`, call_id: `call_${id}`, ...turn.item }
      : 'tool' in turn
        ? {
            type: 'function_call',
            id: `fc_${id}`,
            call_id: `call_${id}`,
            name: turn.tool,
            arguments: JSON.stringify(turn.input),
          }
        : {
            type: 'message',
            role: 'assistant',
            id: `msg_${id}`,
            content: [{ type: 'output_text', text: turn.text }],
          };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'response.created', { response: { id: `resp_${id}` } });
  sse(res, 'response.output_item.done', { output_index: 0, item });
  sse(res, 'response.completed', {
    response: {
      id: `resp_${id}`,
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    },
  });
  res.end();
}

/**
 * The opening of the distiller's prompt (src/engine/distill-prompt.ts), which `claude -p` and
 * `codex exec` pass on as the user's message.
 */
export const DISTILLER_PROMPT_OPENING = 'You maintain a project memory for coding agents.';

/** The user messages' text of a request on either wire. */
function userText(body: Record<string, unknown>): string[] {
  const items = (body.messages ?? body.input ?? []) as { role?: string; content?: unknown }[];
  return items
    .filter((m) => m.role === 'user')
    .flatMap((m) =>
      typeof m.content === 'string'
        ? [m.content]
        : Array.isArray(m.content)
          ? (m.content as { text?: unknown }[]).flatMap((c) =>
              typeof c.text === 'string' ? [c.text] : [],
            )
          : [],
    );
}

/** The distiller's prompt, when this request is a distiller's (either wire); else null. */
export function distillerRequest(body: Record<string, unknown>): string | null {
  return userText(body).find((t) => t.includes(DISTILLER_PROMPT_OPENING)) ?? null;
}

/**
 * The host session a request belongs to: Claude Code names it in metadata.user_id (a JSON
 * text with session_id), Codex sends its thread id as prompt_cache_key.
 */
export function requestSession(r: Recorded): string | null {
  if (r.wire === 'responses')
    return typeof r.body.prompt_cache_key === 'string' ? r.body.prompt_cache_key : null;
  const meta = (r.body.metadata as { user_id?: unknown } | undefined)?.user_id;
  if (typeof meta !== 'string') return null;
  try {
    const id = (JSON.parse(meta) as { session_id?: unknown }).session_id;
    return typeof id === 'string' ? id : null;
  } catch {
    return /session_([0-9a-f-]{36})/.exec(meta)?.[1] ?? null;
  }
}
