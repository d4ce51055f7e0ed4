package dev.knockwatch.streams.count;

import dev.knockwatch.streams.StateStrings;
import dev.knockwatch.streams.VersionedBinarySerde;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The sliding count detector's values, binary: every refusal reads one and writes one. Version 2
 * writes its strings each once ({@link StateStrings}: a command's sightings share its agent id and
 * a few hosts); version 1's values, which differ only there, still read.
 */
public final class RecentRefusalsSerde extends VersionedBinarySerde<RecentRefusals> {

  static final byte VERSION = 2;
  private static final byte FIRST_VERSION = 1;

  public RecentRefusalsSerde() {
    super(RecentRefusals.class, "recent refusals");
  }

  @Override
  protected byte[] encode(RecentRefusals r) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    StateStrings strings = new StateStrings();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.writeInt(r.recent().size());
      for (RecentRefusals.Sighting s : r.recent()) {
        out.writeLong(s.at());
        strings.write(out, s.eventId());
        strings.write(out, s.target());
        strings.write(out, s.agentId());
      }
      out.writeBoolean(r.episode() != null);
      if (r.episode() != null) {
        byte[] episode = WindowCountSerde.write(r.episode());
        out.writeInt(episode.length);
        out.write(episode);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    return bytes.toByteArray();
  }

  @Override
  protected RecentRefusals decode(byte[] bytes) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    StateStrings strings = new StateStrings();
    byte version = in.readByte();
    if (version != VERSION && version != FIRST_VERSION) {
      throw new IOException("unknown format version " + version);
    }
    int n = in.readInt();
    if (n < 0 || n > bytes.length) {
      throw new IOException("a count of " + n + " sightings");
    }
    List<RecentRefusals.Sighting> recent = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      recent.add(new RecentRefusals.Sighting(in.readLong(), strings.read(in), strings.read(in),
          strings.read(in)));
    }
    WindowCount episode = null;
    if (in.readBoolean()) {
      byte[] e = new byte[in.readInt()];
      in.readFully(e);
      episode = WindowCountSerde.read(e);
    }
    if (in.available() != 0) {
      throw new IOException(in.available() + " bytes after the value");
    }
    return new RecentRefusals(List.copyOf(recent), episode);
  }
}
