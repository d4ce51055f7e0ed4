package dev.knockwatch.streams.timeline;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;

/** One thing that happened to a command: an event or an alert (the two streams merged). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TimelineInput(ViolationEvent event, Alert alert) {}
