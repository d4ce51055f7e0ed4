package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.util.Locale;
import java.util.Set;

/** {@code address-class}: a refusal of a sensitive class of address (loopback, cloud metadata, ...). */
public final class AddressClassDetector implements Detector<AddressClassDetector.Settings> {

  static final Key<Set<AddressClass>> CLASSES = Key.setOf("classes", AddressClass.class,
      AddressClassDetector::wireName, "an address class", "the classes that page");

  /** @param classes the address classes that page */
  public record Settings(Set<AddressClass> classes) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("address-class", "a refusal of an address of one of `classes` (what the sandbox said it "
        + "resolved to, else the host's own)", CLASSES, Grain.PER);
  }

  @Override
  public Settings settings(KeyValues v) {
    Set<AddressClass> classes = v.get(CLASSES);
    return new Settings(classes == null ? Set.of() : classes);
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    AddressClass c = e.addressClass();
    if (c == null && e.host() != null) {
      c = HostClassifier.classify(e.host()).orElse(null);
    }
    if (c == null || !s.classes().contains(c)) {
      return null;
    }
    return Finding.of("refused " + Finding.target(e) + ": a " + wireName(c) + " address", e);
  }

  public static String wireName(AddressClass c) {
    return c.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
