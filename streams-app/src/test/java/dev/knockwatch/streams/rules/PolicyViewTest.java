package dev.knockwatch.streams.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyViewTest {

  @TempDir Path a;
  @TempDir Path b;

  static PolicyFiles files(Path dir, String role) throws Exception {
    Files.writeString(dir.resolve("rules.yaml"), "rules:\n  - id: off\n    detector: off-role\n    severity: page\n");
    Files.writeString(dir.resolve("roles.yaml"), "roles:\n  " + role + ":\n    hosts: []\n"
        + "agents:\n  - match: \"ci-*\"\n    role: " + role + "\n");
    return PolicyLoader.files(dir);
  }

  @Test
  void rolesAreRememberedPerAgentAndForgottenWhenTheRolesChange() throws Exception {
    PolicyFiles first = files(a, "ci");
    PolicyFiles second = files(b, "builders");
    AtomicReference<PolicyFiles> published = new AtomicReference<>(first);
    AtomicLong now = new AtomicLong(0);
    PolicyView view = new PolicyView(PolicyLoader.load(first, "test"), store(published), now::get);

    assertThat(view.roleOf("ci-runner-1")).isEqualTo("ci");
    assertThat(view.roleOf("someone")).isEqualTo("default");
    assertThat(view.roleOf(null)).isEqualTo("default");

    published.set(second);
    assertThat(view.roleOf("ci-runner-1")).as("the store is looked at once a second").isEqualTo("ci");
    now.addAndGet(1000);
    assertThat(view.roleOf("ci-runner-1")).isEqualTo("builders");
  }

  static ReadOnlyKeyValueStore<String, PolicyFiles> store(AtomicReference<PolicyFiles> value) {
    return new ReadOnlyKeyValueStore<>() {
      @Override
      public PolicyFiles get(String key) {
        return PolicyFiles.KEY.equals(key) ? value.get() : null;
      }

      @Override
      public KeyValueIterator<String, PolicyFiles> range(String from, String to) {
        throw new UnsupportedOperationException();
      }

      @Override
      public KeyValueIterator<String, PolicyFiles> all() {
        throw new UnsupportedOperationException();
      }

      @Override
      public long approximateNumEntries() {
        return 1;
      }
    };
  }
}
