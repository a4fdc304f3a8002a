// The few Node.js globals the reducers use, declared here so that they compile with TypeScript
// alone (no @types/node): reading stdin, writing stdout and stderr, the command line, and the
// CommonJS `require.main === module` test of the file Node was asked to run, UTF-8 bytes.

interface NodeBytes extends Uint8Array {
  toString(encoding?: "base64"): string;
}

declare var Buffer: {
  from(data: string, encoding: "base64"): NodeBytes;
  from(data: Uint8Array): NodeBytes;
  concat(chunks: readonly Uint8Array[]): NodeBytes;
};

declare var process: {
  argv: string[];
  exitCode: number | undefined;
  stdin: {
    setEncoding(encoding: "utf8"): void;
    on(event: "data", listener: (chunk: string) => void): void;
    on(event: "end", listener: () => void): void;
  };
  stdout: { write(text: string): boolean };
  stderr: { write(text: string): boolean };
};

declare var require: { main: unknown };
declare var module: unknown;

declare var TextEncoder: { new (): { encode(text: string): Uint8Array } };
