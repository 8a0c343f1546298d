// Incremental Server-Sent Events parsing: feed text chunks, get each event's JSON `data` as it completes.

export class SseParser {
  private buffer = '';

  /** Returns the JSON messages completed by this chunk (comment lines and non-data fields are skipped). */
  push(chunk: string): unknown[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const out: unknown[] = [];
    let cut: number;
    while ((cut = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data.length > 0) out.push(JSON.parse(data));
    }
    return out;
  }
}
