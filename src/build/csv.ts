/**
 * RFC 4180 CSV, streamed: quoted fields may hold commas, doubled quotes and line breaks, so a
 * record is not a line. The parser takes text in chunks of any size and hands out whole
 * records with the line each one starts on, which is what a bad-row message must name.
 */
import { createReadStream } from 'node:fs';

export interface CsvRecord {
  fields: string[];
  /** 1-based line of the file where the record starts. */
  line: number;
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/** Incremental parser: `push` text as it arrives, `end` once the input is exhausted. */
export class CsvParser {
  private field = '';
  private fields: string[] = [];
  private inQuotes = false;
  /** A quote inside a quoted field: either the closing quote or the first half of `""`. */
  private quotePending = false;
  /** The previous chunk ended on CR: an LF opening the next chunk belongs to the same break. */
  private crPending = false;
  private line = 1;
  private recordLine = 1;
  private started = false;
  private first = true;

  push(text: string, out: CsvRecord[]): void {
    let i = 0;
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1; // a byte-order mark is not part of the first header
    }
    let runStart = i;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.crPending) {
        this.crPending = false;
        if (c === LF) {
          runStart = i + 1;
          continue;
        }
      }
      if (this.inQuotes) {
        if (this.quotePending) {
          this.quotePending = false;
          if (c === QUOTE) {
            this.field += '"';
            runStart = i + 1;
            continue;
          }
          this.inQuotes = false; // that quote closed the field; c is read below as unquoted text
        } else {
          if (c === QUOTE) {
            this.field += text.slice(runStart, i);
            this.quotePending = true;
            runStart = i + 1;
          } else if (c === LF) {
            this.line++;
          }
          continue;
        }
      }
      if (c === COMMA) {
        this.field += text.slice(runStart, i);
        this.endField();
        runStart = i + 1;
      } else if (c === LF || c === CR) {
        this.field += text.slice(runStart, i);
        this.endRecord(out);
        this.line++;
        this.recordLine = this.line;
        if (c === CR) this.crPending = true;
        runStart = i + 1;
      } else if (c === QUOTE && this.field.length === 0 && i === runStart) {
        this.inQuotes = true;
        this.started = true;
        runStart = i + 1;
      } else {
        // Any other character, a quote inside an unquoted field included: the municipalities'
        // files are not all strict RFC 4180, and a literal quote loses nothing (as Python's csv).
        this.started = true;
      }
    }
    this.field += text.slice(runStart);
  }

  end(out: CsvRecord[]): void {
    if (this.inQuotes && !this.quotePending) {
      throw new CsvSyntaxError(this.recordLine, `line ${this.recordLine}: the file ends inside a quoted field`);
    }
    this.inQuotes = false;
    this.quotePending = false;
    if (this.started || this.fields.length > 0 || this.field.length > 0) this.endRecord(out);
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.started = true;
  }

  private endRecord(out: CsvRecord[]): void {
    const blank = !this.started && this.fields.length === 0 && this.field.length === 0;
    if (!blank) {
      this.fields.push(this.field);
      out.push({ fields: this.fields, line: this.recordLine });
    }
    this.fields = [];
    this.field = '';
    this.started = false;
  }
}

/** Parses a whole string; for tests and small inline inputs. */
export function parseCsv(text: string): CsvRecord[] {
  const out: CsvRecord[] = [];
  const parser = new CsvParser();
  parser.push(text, out);
  parser.end(out);
  return out;
}

/** Streams the records of a UTF-8 CSV file, header included, with their starting lines. */
export async function* readCsv(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<CsvRecord> {
  const parser = new CsvParser();
  const out: CsvRecord[] = [];
  const stream = createReadStream(path);
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onBytes?.(chunk.length);
    parser.push(decoder.decode(chunk, { stream: true }), out);
    yield* out;
    out.length = 0;
  }
  parser.push(decoder.decode(), out);
  parser.end(out);
  yield* out;
}
