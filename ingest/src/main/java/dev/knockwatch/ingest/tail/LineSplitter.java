package dev.knockwatch.ingest.tail;

/**
 * Cuts one file's bytes into lines as they are read, chunk by chunk, from a position on: a line
 * ends at "\n" (the caller drops a "\r" before it). A line that spans chunks is gathered in a
 * {@link LineBuffer}, so a line longer than the bound comes out cut (its start and its end). A
 * cut line that has not ended where the bytes end is given as it is, and its rest is then skipped
 * up to its newline: a writer that never ends a line cannot make the reader hold it without limit.
 * Pure: bytes in, lines out, no file.
 */
final class LineSplitter {

  /** Where the lines go: {@code [start, end)} in the file, its bytes (as kept) and whether its middle was left out. */
  interface Lines {
    void line(long start, long end, byte[] bytes, int from, int length, boolean cut);
  }

  private final int maxLineBytes;
  private final LineBuffer partial;
  /** The file position of the next chunk's first byte. */
  private long base;
  /** Where the line being read starts: the position after the last line given. */
  private long lineStart;
  /** Skipping the rest of a cut line, up to its newline. */
  private boolean discarding;

  LineSplitter(int maxLineBytes) {
    this.maxLineBytes = maxLineBytes;
    this.partial = new LineBuffer(maxLineBytes);
  }

  /** Starts at {@code position}, skipping a cut line's rest first when {@code discarding}. */
  void start(long position, boolean discarding) {
    partial.reset();
    this.base = position;
    this.lineStart = position;
    this.discarding = discarding;
  }

  /**
   * Splits the next {@code n} bytes of the file, giving at most {@code maxLines} lines; returns
   * how many it gave. When that is {@code maxLines} it may have stopped inside the chunk: the
   * caller reads again from {@link #position()}.
   */
  int feed(byte[] chunk, int n, int maxLines, Lines out) {
    int given = 0;
    int start = 0;
    for (int i = Bytes.nextNewline(chunk, 0, n); i < n; i = Bytes.nextNewline(chunk, i + 1, n)) {
      long end = base + i + 1;
      if (discarding) {
        discarding = false;
      } else if (partial.isEmpty() && i - start <= maxLineBytes) {
        out.line(lineStart, end, chunk, start, i - start, false); // a whole line within the chunk
        given++;
      } else {
        partial.add(chunk, start, i - start);
        byte[] bytes = partial.bytes();
        out.line(lineStart, end, bytes, 0, bytes.length, partial.cut());
        given++;
      }
      partial.reset();
      lineStart = end;
      start = i + 1;
      if (given >= maxLines) {
        return given;
      }
    }
    if (!discarding && start < n) {
      partial.add(chunk, start, n - start);
    }
    base += n;
    return given;
  }

  /**
   * At the file's end ({@code size}) with the writer gone quiet: a last line without its newline
   * is given as it is. Returns whether it gave one.
   */
  boolean flushAt(long size, Lines out) {
    if (partial.cut() || discarding || partial.isEmpty() || base != size) {
      return false;
    }
    byte[] bytes = partial.bytes();
    out.line(lineStart, base, bytes, 0, bytes.length, false);
    partial.reset();
    lineStart = base;
    return true;
  }

  /**
   * Where the bytes read end: a line past the bound that has not ended there is given cut (its
   * start and its end so far), and its rest will be skipped. Returns whether it gave one.
   */
  boolean end(Lines out) {
    if (!partial.cut() || discarding) {
      return false;
    }
    byte[] bytes = partial.bytes();
    out.line(lineStart, base, bytes, 0, bytes.length, true);
    partial.reset();
    discarding = true;
    lineStart = base;
    return true;
  }

  /** The position after the last line given (or after a cut line's bytes read so far): where to read on from. */
  long position() {
    return lineStart;
  }

  boolean discarding() {
    return discarding;
  }
}
