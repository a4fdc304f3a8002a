// The capture of acp-devtools' proxy, standing in for it (acp-devtools is not on npm): wraps
// an ACP agent and writes one CapturedMessage per line to OUT, as `acp-devtools proxy --log
// json` (or `acp-devtools inspect ID --format jsonl`) does. The framing, the parse and the
// object's keys, in their order, follow packages/core/src/acp/parser.ts, types.ts and
// proxy/proxy.ts of github.com/maksugr/acp-devtools (the `capture` method).
//
//     node devtools_capture.mjs OUT -- AGENT [ARGS...]
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';

const [out, dashes, command, ...args] = process.argv.slice(2);
if (!out || dashes !== '--' || !command) {
    process.stderr.write('usage: node devtools_capture.mjs OUT -- AGENT [ARGS...]\n');
    process.exit(2);
}
writeFileSync(out, '');

class LineFramer {
    buffer = '';
    feed(chunk) {
        this.buffer += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
        const lines = [];
        let nl = this.buffer.indexOf('\n');
        while (nl >= 0) {
            let line = this.buffer.slice(0, nl);
            this.buffer = this.buffer.slice(nl + 1);
            if (line.endsWith('\r')) line = line.slice(0, -1);
            if (line.length > 0) lines.push(line);
            nl = this.buffer.indexOf('\n');
        }
        return lines;
    }
}

function classify(payload) {
    if ('method' in payload && 'id' in payload) return { kind: 'request', method: payload.method, rpcId: payload.id };
    if ('method' in payload) return { kind: 'notification', method: payload.method };
    if ('error' in payload) return { kind: 'error', rpcId: payload.id ?? null };
    if ('result' in payload) return { kind: 'response', rpcId: payload.id ?? null };
    return { kind: 'unknown' };
}

function parseFrame(raw) {
    let json;
    try {
        json = JSON.parse(raw);
    } catch (err) {
        return { raw, payload: null, kind: 'unknown', parseError: `invalid JSON: ${err.message}` };
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json) || json.jsonrpc !== '2.0') {
        return { raw, payload: null, kind: 'unknown', parseError: 'not a JSON-RPC 2.0 message' };
    }
    return { raw, payload: json, ...classify(json) };
}

let seq = 0;
const framers = { 'editor-to-agent': new LineFramer(), 'agent-to-editor': new LineFramer() };
function capture(direction, chunk) {
    for (const raw of framers[direction].feed(chunk)) {
        const parsed = parseFrame(raw);
        const msg = { seq: ++seq, timestamp: Date.now(), direction, kind: parsed.kind, raw, payload: parsed.payload };
        if (parsed.method !== undefined) msg.method = parsed.method;
        if (parsed.rpcId !== undefined) msg.rpcId = parsed.rpcId;
        if (parsed.parseError !== undefined) msg.parseError = parsed.parseError;
        appendFileSync(out, JSON.stringify(msg) + '\n');
    }
}

const agent = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.on('data', (chunk) => {
    capture('editor-to-agent', chunk);
    agent.stdin.write(chunk);
});
process.stdin.once('end', () => agent.stdin.end());
agent.stdout.on('data', (chunk) => {
    capture('agent-to-editor', chunk);
    process.stdout.write(chunk);
});
agent.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
