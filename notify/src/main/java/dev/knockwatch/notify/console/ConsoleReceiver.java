package dev.knockwatch.notify.console;

import dev.knockwatch.notify.spi.Receiver;

/** One line per notification on standard output. */
public record ConsoleReceiver(String name) implements Receiver {}
