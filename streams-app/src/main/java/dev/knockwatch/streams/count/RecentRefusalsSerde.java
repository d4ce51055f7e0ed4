package dev.knockwatch.streams.count;

import dev.knockwatch.streams.state.StateStrings;
import dev.knockwatch.streams.state.Varints;
import dev.knockwatch.streams.state.VersionedBinarySerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The sliding count detector's values, binary: every refusal reads one and writes one. Version 2
 * writes its strings each once ({@link StateStrings}: a command's sightings share its agent id and
 * a few hosts), its numbers as varints and each sighting's time as the step from the one before
 * ({@link Varints}); version 1's values (fixed-width numbers) still read.
 */
public final class RecentRefusalsSerde extends VersionedBinarySerde<RecentRefusals> {

  static final byte VERSION = 2;
  private static final byte FIRST_VERSION = 1;

  public RecentRefusalsSerde() {
    super(RecentRefusals.class, "recent refusals");
  }

  @Override
  protected byte[] encode(RecentRefusals r) {
    return StateStrings.writeValue(VERSION, 128, (out, strings) -> {
      Varints.write(out, r.recent().size());
      long previous = 0;
      for (RecentRefusals.Sighting s : r.recent()) {
        Varints.write(out, s.at() - previous);
        previous = s.at();
        strings.write(out, s.eventId());
        strings.write(out, s.target());
        strings.write(out, s.agentId());
      }
      out.writeBoolean(r.episode() != null);
      if (r.episode() != null) {
        byte[] episode = WindowCountSerde.write(r.episode());
        Varints.write(out, episode.length);
        out.write(episode);
      }
    });
  }

  @Override
  protected RecentRefusals decode(byte[] bytes) throws IOException {
    return StateStrings.readValue(bytes, (in, strings, version) -> {
      boolean first = version == FIRST_VERSION;
      int n = WindowCountSerde.size(in, first);
      if (n < 0 || n > bytes.length) {
        throw new IOException("a count of " + n + " sightings");
      }
      List<RecentRefusals.Sighting> recent = new ArrayList<>(n);
      long at = 0;
      for (int i = 0; i < n; i++) {
        at = first ? in.readLong() : at + Varints.read(in);
        recent.add(new RecentRefusals.Sighting(at, strings.read(in), strings.read(in), strings.read(in)));
      }
      WindowCount episode = null;
      if (in.readBoolean()) {
        int length = WindowCountSerde.size(in, first);
        if (length < 0 || length > in.available()) {
          throw new IOException("an episode of " + length + " bytes in " + in.available());
        }
        byte[] e = new byte[length];
        in.readFully(e);
        episode = WindowCountSerde.read(e);
      }
      return new RecentRefusals(List.copyOf(recent), episode);
    }, VERSION, FIRST_VERSION);
  }
}
