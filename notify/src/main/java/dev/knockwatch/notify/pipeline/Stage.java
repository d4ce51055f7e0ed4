package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.spi.Notification;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One stage of the notify pipeline, in the shape of Alertmanager's {@code notify.Stage}: given one
 * alert on its way to one receiver, it either settles it (records what became of it and returns
 * false) or passes it on (true). {@link #builder()} lists stages in order and runs them as one, as
 * Alertmanager's {@code MultiStage}: the first that settles a delivery ends it.
 */
@FunctionalInterface
public interface Stage {

  /** False when this stage settled the delivery; true to pass it to the next stage. */
  boolean exec(Delivery d);

  static Builder builder() {
    return new Builder();
  }

  /**
   * One alert bound for one receiver, as the stages see it: what the route named, when it was
   * read, the record it stands for, and what the stages learn on the way ({@link #last}, {@link
   * #event}, set by dedup).
   */
  final class Delivery {
    public final Alert alert;
    public final Routing.Target target;
    public final Instant now;
    public final long nowNanos;
    public final Pending pending;
    /** Why the alert goes to no receiver now, asked once for the alert ({@link Mute}); empty: it goes. */
    public final java.util.Optional<Mute.Muted> muted;
    /** What the receiver was last sent or decided for the alert; null: nothing. */
    public NotificationLog.Entry last;
    /** firing (the receiver has had nothing of it), updated or resolved. */
    public Notification.Event event;

    public Delivery(Alert alert, Routing.Target target, Instant now, long nowNanos, Pending pending,
        java.util.Optional<Mute.Muted> muted) {
      this.alert = alert;
      this.muted = muted;
      this.target = target;
      this.now = now;
      this.nowNanos = nowNanos;
      this.pending = pending;
    }

    public String receiver() {
      return target.receiver();
    }
  }

  /** The stages in the order they run. */
  final class Builder {
    private final List<Stage> stages = new ArrayList<>();

    public Builder then(Stage stage) {
      stages.add(stage);
      return this;
    }

    public Stage build() {
      List<Stage> all = List.copyOf(stages);
      return d -> {
        for (Stage s : all) {
          if (!s.exec(d)) {
            return false;
          }
        }
        return true;
      };
    }
  }
}
