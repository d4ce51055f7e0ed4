package dev.knockwatch.cli.bench;

/** A run of what a user would pick instead (kafkacat, rsyslog, syslog-ng): its wall time and its own process's CPU. */
record Baseline(double seconds, double cpuSeconds) {}
