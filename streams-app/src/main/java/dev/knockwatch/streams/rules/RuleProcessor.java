package dev.knockwatch.streams.rules;

import dev.knockwatch.events.ViolationEvent;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * What every rule's processor does first: skips a record without a key or a value, one the
 * detector does not read, and one another path judges (a rule of the task's grain judges a refusal
 * with a task from the by-grain topic); works out the agent's role; and keeps only what the rule's
 * {@code match} and {@code except} select. The rest is the detector's: {@link #judge}.
 */
public abstract class RuleProcessor implements Processor<String, ViolationEvent, String, Hit> {

  protected final Rule rule;
  private final Policy policy;
  protected ProcessorContext<String, Hit> context;
  protected PolicyView view;

  protected RuleProcessor(Rule rule, Policy policy) {
    this.rule = rule;
    this.policy = policy;
  }

  @Override
  public final void init(ProcessorContext<String, Hit> context) {
    this.context = context;
    this.view = PolicyView.of(policy, context);
    start();
  }

  /** After {@link #init}: open stores, schedule sweeps. */
  protected void start() {}

  @Override
  public final void process(Record<String, ViolationEvent> record) {
    String key = record.key();
    ViolationEvent e = record.value();
    if (key == null || e == null || !reads(e) || !rule.judgesAt(key, e)) {
      return;
    }
    String role = view.roleOf(e.agentId());
    if (rule.match().matches(e, role)) {
      judge(record, key, e, role);
    }
  }

  /** Whether the detector reads {@code e} at all (before its role is worked out). */
  protected boolean reads(ViolationEvent e) {
    return true;
  }

  /** One event the rule selects, under its key at the rule's grain. */
  protected abstract void judge(Record<String, ViolationEvent> record, String key, ViolationEvent e, String role);
}
