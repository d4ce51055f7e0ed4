package dev.knockwatch.bench;

import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceFormat;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.squid.SquidAccessLogParser;
import dev.knockwatch.ingest.formats.srt.SrtViolationParser;
import java.time.Instant;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;

/**
 * Parsing alone, one thread: lines/s of each parser on a real-shaped line (an op is one line).
 * {@code srtRecord} repeats one record, as a retrying command does (the parser reads one command's
 * file, and remembers the last command text it redacted); {@code srtRecordEachCommandNew} gives
 * every record another command text.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ParseBenchmark extends OneThread {

  static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  static final String SRT = "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\","
      + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\",\"command\":\"curl -s https://example.com/path?token=SECRET\","
      + "\"timestamp\":\"2026-11-29T18:45:32.887Z\"}";
  static final String SQUID = "1795978485.769      0 127.0.0.1 TCP_DENIED/403 3495 CONNECT example.com:443 "
      + "srt.eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ== xhfHytmXL-L6RsYw2CrSjA HIER_NONE/- text/html";

  /** 4,096 records whose command texts all differ: no record repeats the one before. */
  static final String[] SRT_DISTINCT = new String[4096];

  static {
    for (int i = 0; i < SRT_DISTINCT.length; i++) {
      SRT_DISTINCT[i] = SRT.replace("/path?token=SECRET", "/path" + i + "?token=SECRET" + i);
    }
  }

  static final String KMSG = "4,377,1257394565,-;agent-egress-deny: IN= OUT=lo SRC=10.77.0.1 DST=10.77.0.2 LEN=60 TOS=0x00"
      + " PREC=0x00 TTL=64 ID=40627 DF PROTO=TCP SPT=35252 DPT=443 WINDOW=65495 RES=0x00 SYN URGP=0 UID=65534 GID=65534 ";
  static final String ULOGD = "{\"timestamp\": \"2026-12-06T04:35:35.909181\", \"dvc\": \"Netfilter\", \"raw.pktlen\": 60,"
      + " \"raw.pktcount\": 1, \"oob.prefix\": \"agent-egress-deny: \", \"oob.time.sec\": 1796531735, \"oob.time.usec\": 909181,"
      + " \"oob.mark\": 0, \"oob.ifindex_out\": 1, \"oob.hook\": 3, \"oob.family\": 2, \"oob.protocol\": 2048,"
      + " \"oob.uid\": 65534, \"oob.gid\": 65534, \"action\": \"blocked\", \"ip.protocol\": 6, \"ip.tos\": 0, \"ip.ttl\": 64,"
      + " \"ip.totlen\": 60, \"ip.ihl\": 5, \"ip.csum\": 60179, \"ip.id\": 15116, \"ip.fragoff\": 16384, \"src_port\": 40764,"
      + " \"dest_port\": 8443, \"tcp.seq\": 4290920193, \"tcp.ackseq\": 0, \"tcp.window\": 65495, \"tcp.syn\": 1,"
      + " \"oob.in\": \"\", \"oob.out\": \"lo\", \"src_ip\": \"10.77.0.1\", \"dest_ip\": \"10.77.0.2\"}";

  /** One refusal as tinyproxy 1.11.1 logs it at LogLevel Info: the connection, its request, the refusal. */
  static final String[] TINYPROXY = {
      "CONNECT   Dec 06 10:31:16.908 [3272]: Connect (file descriptor 2): 10.88.0.2",
      "CONNECT   Dec 06 10:31:16.908 [3272]: Request (file descriptor 2): GET http://denied.example/path?token=s3cr3t HTTP/1.1",
      "NOTICE    Dec 06 10:31:16.908 [3272]: Proxying refused on filtered domain \"denied.example\""};

  static final String PRIVOXY_ACCEPTED = "2026-12-06 10:28:43.068 7f69cb8e96c0 Connect: Accepted connection from 10.78.0.2"
      + " on socket 6";
  static final String PRIVOXY_CRUNCH = "2026-12-06 10:28:43.068 7f69cb8e96c0 Crunch: Blocked: http://blocked.example/path"
      + "?token=SECRET";

  final SrtViolationParser srt = new SrtViolationParser();
  /** smokescreen's denial as v0.0.4 writes it (the format's samples/README.md). */
  static final String SMOKESCREEN = "{\"allow\":false,\"content_length\":77,\"decision_reason\":\"rule has enforce policy\","
      + "\"dns_lookup_time_ms\":0,\"enforce_would_deny\":true,\"id\":\"ctn2m4pq8h3c73b1e5b0\",\"inbound_remote_addr\":"
      + "\"10.0.3.7:51234\",\"inbound_remote_x509_cn\":\"sandbox-runner-1\",\"inbound_remote_x509_ou\":\"agents\","
      + "\"level\":\"warning\",\"msg\":\"CANONICAL-PROXY-DECISION\",\"project\":\"agents\",\"proxy_type\":\"connect\","
      + "\"requested_host\":\"github.com:443\",\"role\":\"sandbox-runner-1\",\"start_time\":"
      + "\"2026-12-05T10:40:06.402117093Z\",\"time\":\"2026-12-05T10:40:06Z\",\"trace_id\":\"\"}";

  /** A deny rule's policy verdict as Hubble v1.19.4's {@code -o json} writes it (the format's samples/README.md). */
  static final String HUBBLE = "{\"flow\":{\"time\":\"2026-12-05T10:40:07.118530412Z\""
      + ",\"uuid\":\"0a7d5e2c-41b9-4f63-8e1d-72c9b04f3a15\",\"verdict\":\"DROPPED\",\"drop_reason\":181"
      + ",\"ethernet\":{\"source\":\"3a:5e:91:0c:7d:22\",\"destination\":\"be:1f:44:a0:6b:13\"}"
      + ",\"IP\":{\"source\":\"10.244.1.60\",\"destination\":\"104.20.68.143\",\"ipVersion\":\"IPv4\"}"
      + ",\"l4\":{\"TCP\":{\"source_port\":52210,\"destination_port\":443,\"flags\":{\"SYN\":true}}}"
      + ",\"source\":{\"ID\":1412,\"identity\":48213,\"cluster_name\":\"knock\",\"namespace\":\"agents\""
      + ",\"labels\":[\"k8s:app=agent-runner\""
      + ",\"k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=agents\""
      + ",\"k8s:io.cilium.k8s.policy.cluster=knock\""
      + ",\"k8s:io.cilium.k8s.policy.serviceaccount=agent-runner\""
      + ",\"k8s:io.kubernetes.pod.namespace=agents\"],\"pod_name\":\"agent-runner-6c9f7d5b8-x2lqp\""
      + ",\"workloads\":[{\"name\":\"agent-runner\",\"kind\":\"Deployment\"}]},\"destination\":{\"identity\":2"
      + ",\"labels\":[\"reserved:world\"]},\"Type\":\"L3_L4\",\"node_name\":\"kind-knock/kind-worker\""
      + ",\"destination_names\":[\"pastebin.com\"],\"event_type\":{\"type\":5},\"traffic_direction\":\"EGRESS\""
      + ",\"policy_match_type\":1,\"drop_reason_desc\":\"POLICY_DENY\",\"Summary\":\"TCP Flags: SYN\""
      + ",\"egress_denied_by\":[{\"name\":\"agents-deny-paste\",\"namespace\":\"agents\""
      + ",\"labels\":[\"k8s:io.cilium.k8s.policy.derived-from=CiliumNetworkPolicy\""
      + ",\"k8s:io.cilium.k8s.policy.name=agents-deny-paste\""
      + ",\"k8s:io.cilium.k8s.policy.namespace=agents\""
      + ",\"k8s:io.cilium.k8s.policy.uid=5d0b7c1e-2f43-4b8e-9a61-0c7e2d9f1a34\"],\"revision\":\"14\""
      + ",\"kind\":\"CiliumNetworkPolicy\"}]},\"node_name\":\"kind-knock/kind-worker\""
      + ",\"time\":\"2026-12-05T10:40:07.118530412Z\"}";
  /** OpenShell 0.0.111's refused CONNECT, an OCSF Network Activity event (the ocsf format's samples/README.md). */
  static final String OCSF = "{\"action\":\"Denied\",\"action_id\":2,\"activity_id\":1,\"activity_name\":\"Open\",\"actor\":{\"pro"
      + "cess\":{\"cmd_line\":\"/usr/bin/curl\",\"name\":\"/usr/bin/curl\",\"parent_process\":{\"name\":\"/us"
      + "r/bin/bash\",\"parent_process\":{\"name\":\"/usr/local/bin/node\",\"pid\":0},\"pid\":0},\"pid\":64}}"
      + ",\"category_name\":\"Network Activity\",\"category_uid\":4,\"class_name\":\"Network Activity\",\"cla"
      + "ss_uid\":4001,\"container\":{\"image\":{\"name\":\"ghcr.io/openshell/sandbox:latest\"},\"name\":\"wo"
      + "rk-session\",\"uid\":\"5c1f9e2a-7b3d-4e8a-9f10-2d6c4b8a1e37\"},\"device\":{\"hostname\":\"work-sessi"
      + "on\",\"os\":{\"name\":\"Linux\"}},\"disposition\":\"Blocked\",\"disposition_id\":2,\"dst_endpoint\":"
      + "{\"domain\":\"httpbin.org\",\"port\":443},\"firewall_rule\":{\"name\":\"-\",\"type\":\"opa\"},\"is_s"
      + "rc_dst_assignment_known\":true,\"message\":\"CONNECT denied httpbin.org:443\",\"metadata\":{\"produc"
      + "t\":{\"name\":\"OpenShell Sandbox Supervisor\",\"vendor_name\":\"OpenShell\",\"version\":\"0.0.111\""
      + "},\"profiles\":[\"security_control\",\"network_proxy\",\"container\",\"host\"],\"uid\":\"5c1f9e2a-7b"
      + "3d-4e8a-9f10-2d6c4b8a1e37\",\"version\":\"1.8.0\"},\"proxy_endpoint\":{\"ip\":\"127.0.0.1\",\"port\""
      + ":3128},\"severity\":\"Medium\",\"severity_id\":3,\"src_endpoint\":{\"ip\":\"10.200.0.2\",\"port\":40"
      + "118},\"status\":\"Failure\",\"status_detail\":\"endpoint httpbin.org:443 is not allowed by any polic"
      + "y\",\"status_id\":2,\"time\":1796467202000,\"type_name\":\"Network Activity: Open\",\"type_uid\":400"
      + "101}";
  /** Docker Sandboxes' denial as schema 1.82.0 writes it (the format's samples/README.md). */
  static final String DOCKER_SANDBOX = "{\"audit_event_id\":\"95e7257f-93c9-4f29-bde7-88830e2dae80\",\"timestamp\":"
      + "\"2026-05-28T19:15:00.728933Z\",\"schema_version\":\"1.82.0\",\"category\":\"AUDIT_CATEGORY_EVALUATION\","
      + "\"decision\":\"AUDIT_DECISION_DENY\",\"username\":\"jordandoe\",\"user_email\":\"jordandoe@example.com\","
      + "\"org_id\":\"9f8e7d6c-5b4a-3210-fedc-ba9876543210\",\"org_name\":\"Acme Inc\",\"audit_session_id\":"
      + "\"8a3bc076-79d0-4502-baf3-cc6ad35fb578\",\"resource_id\":\"example.com:443\",\"os\":\"macos\",\"app_version\":"
      + "\"v0.31.0\",\"client_name\":\"sbx\",\"hostname\":\"host-machine\",\"deny_reason\":[\"no applicable policies for"
      + " op(action=net:connect:tcp, resource=net:domain:example.com:443)\"],\"action_type\":\"network_egress\","
      + "\"network_egress\":{\"protocol\":\"tcp\"},\"agent\":\"claude\"}";
  /** Envoy's RBAC refusal in docs/WALLS.md's json_format and in Istio's text format (the format's samples/README.md). */
  static final String[] ENVOY = {
      "{\"authority\":\"github.com:443\",\"connection_termination_details\":null,\"downstream_peer_subject\":"
          + "\"CN=runner-1,OU=sandbox\",\"downstream_peer_uri_san\":\"spiffe://agents.example/sandbox/runner-1\","
          + "\"downstream_remote_address\":\"10.0.3.7:51234\",\"method\":\"CONNECT\",\"path\":null,"
          + "\"requested_server_name\":null,\"response_code\":403,\"response_code_details\":"
          + "\"rbac_access_denied_matched_policy[none]\",\"response_flags\":null,\"start_time\":"
          + "\"2026-12-05T10:40:06.402Z\",\"upstream_host\":null,\"user_agent\":\"curl/8.11.1\"}",
      "[2026-12-05T10:40:06.402Z] \"GET /v1/models?api_key=sk-live-4f9a2c HTTP/1.1\" 403 - "
          + "rbac_access_denied_matched_policy[ns[agents]-policy[deny-model-apis]-rule[0]] - \"-\" 0 19 0 - \"-\" "
          + "\"curl/8.11.1\" \"3f1c0c2e-9b8a-4e0f-a1b2-0c4d5e6f7a81\" \"api.openai.com\" \"-\" "
          + "outbound|80||api.openai.com - 104.18.7.192:80 10.0.3.7:51234 - -"};

  /** The netfilter format through the registry, as a source of it is read: its prefixes and its agents. */
  final LineParser netfilter = netfilter();
  /** The smokescreen format through the registry, its agents mapped by certificate and address. */
  final LineParser smokescreen = source("smokescreen", "agents: [{inbound_remote_x509_cn: sandbox-runner-1, agent:"
      + " sandbox-runner-1}, {inbound_remote_addr: 10.0.4.0/24, agent: build-farm}]\n");
  /** The ocsf format through the registry, its agents mapped by sandbox. */
  final LineParser ocsf = source("ocsf", "agents: [{container.name: work-session, agent: openshell-work-session}]\n");
  /** The Docker Sandboxes format through the registry, its user's agent mapped. */
  final LineParser dockerSandbox = source("dockersandbox", "agents: [{username: jordandoe, ai_agent: claude, agent:"
      + " claude-jordandoe}]\n");
  /** The envoy format through the registry, its agents mapped by SPIFFE id and address. */
  final LineParser envoy = source("envoy", "agents: [{uri_san: \"spiffe://agents.example/sandbox/*\", agent:"
      + " sandbox-runner-1}, {source: 10.0.3.0/24, agent: sandbox-runner-1}]\n");
  /** The tinyproxy format through the registry, with its agents. */
  final LineParser tinyproxy = source("tinyproxy", "agents: [{source: 10.88.0.0/24, agent: sandbox-runner-1}]\n");
  /** The hubble format through the registry, its agents mapped by namespace and a label. */
  final LineParser hubble = source("hubble", "agents: [{namespace: agents, label: \"k8s:app=agent-runner\", agent:"
      + " agent-runner}]\n");
  final SquidAccessLogParser squid = new SquidAccessLogParser();
  /** The privoxy format through the registry, its agents mapped, the crunch's thread's client already read. */
  final LineParser privoxy = privoxy();
  long offset;

  @Benchmark
  public Parsed srtRecord() {
    return srt.parse(new SourceLine("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", offset++, SRT, "ci-1", "xhfHytmXL-L6RsYw2CrSjA", "h", NOW));
  }

  /** Every command text new: the worst case for the parser's last-command memory (a file holds one command). */
  @Benchmark
  public Parsed srtRecordEachCommandNew() {
    long n = offset++;
    return srt.parse(new SourceLine("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", n,
        SRT_DISTINCT[(int) (n & (SRT_DISTINCT.length - 1))], "ci-1", "xhfHytmXL-L6RsYw2CrSjA", "h", NOW));
  }

  /** Redaction alone, of a command text like bench ingest's: each one new, one secret in it. */
  @Benchmark
  public String redactCommand() {
    return dev.knockwatch.events.Redactor.redact(COMMANDS[(int) (offset++ & (COMMANDS.length - 1))]);
  }

  static final String[] COMMANDS = new String[4096];

  static {
    for (int i = 0; i < COMMANDS.length; i++) {
      COMMANDS[i] = "curl -s https://example.com:443/path?token=SECRET" + i;
    }
  }

  private static LineParser netfilter() {
    SourceFormat f = Formats.named("netfilter").orElseThrow();
    KeyValues with = KeyValues.of(new YamlFile("bench", new ArrayList<>()).parse("prefixes: [\"agent-egress-deny: \"]\n"
        + "agents: [{uid: \"65534\", agent: sandbox-runner-1}]\n").orElseThrow(), "bench", f.keys()).orElseThrow();
    return f.parser(new FileOptions(with, "kernel/kernel.log", "kernel", other -> false));
  }

  /** A kernel LOG line as /dev/kmsg gives it. */
  @Benchmark
  public Parsed netfilterKmsgLine() {
    return netfilter.parse(new SourceLine("kernel/kernel.log", offset++, KMSG, null, null, "h", NOW));
  }

  /** A ulogd2 JSON record of NFLOG. */
  @Benchmark
  public Parsed netfilterUlogdRecord() {
    return netfilter.parse(new SourceLine("kernel/ulogd.json", offset++, ULOGD, null, null, "h", NOW));
  }

  /** A denied CANONICAL-PROXY-DECISION line of smokescreen. */
  @Benchmark
  public Parsed smokescreenDecisionLine() {
    return smokescreen.parse(new SourceLine("proxy/smokescreen.log", offset++, SMOKESCREEN, null, null, "h", NOW));
  }

  /** A refused CONNECT of OpenShell's, an OCSF JSON line. */
  @Benchmark
  public Parsed ocsfNetworkActivityLine() {
    return ocsf.parse(new SourceLine("openshell/openshell-ocsf.log", offset++, OCSF, null, null, "h", NOW));
  }

  /** An Envoy RBAC refusal, in turn in json_format and in Istio's text format. */
  @Benchmark
  public Parsed envoyRefusalLine() {
    long n = offset++;
    return envoy.parse(new SourceLine("proxy/envoy.log", n, ENVOY[(int) (n % 2)], null, null, "h", NOW));
  }

  /** A line of tinyproxy's log, in turn each of a refusal's three. */
  @Benchmark
  public Parsed tinyproxyLine() {
    long n = offset++;
    return tinyproxy.parse(new SourceLine("proxy/tinyproxy.log", n, TINYPROXY[(int) (n % 3)], null, null, "h", NOW));
  }

  /** A policy-dropped flow of Hubble's, its pod mapped by one of its labels. */
  @Benchmark
  public Parsed hubbleFlowLine() {
    return hubble.parse(new SourceLine("proxy/hubble.log", offset++, HUBBLE, null, null, "h", NOW));
  }

  private static LineParser source(String type, String yaml) {
    SourceFormat f = Formats.named(type).orElseThrow();
    KeyValues with = KeyValues.of(new YamlFile("bench", new ArrayList<>()).parse(yaml).orElseThrow(), "bench", f.keys())
        .orElseThrow();
    return f.parser(new FileOptions(with, "proxy/" + type + ".log", type, other -> false));
  }

  private static LineParser privoxy() {
    LineParser p = source("privoxy", "agents: [{source: 10.78.0.2, agent: sandbox-runner-1}]\n");
    p.parse(new SourceLine("proxy/privoxy.log", 0, PRIVOXY_ACCEPTED, null, null, "h", NOW));
    return p;
  }

  /** A Docker Sandboxes audit record that denied a connection, of a mapped user and agent. */
  @Benchmark
  public Parsed dockerSandboxDenial() {
    return dockerSandbox.parse(new SourceLine("auditkit/audit-x-1.jsonl", offset++, DOCKER_SANDBOX, null, null, "h", NOW));
  }

  /** A privoxy {@code Crunch: Blocked} line of a thread whose client is known. */
  @Benchmark
  public Parsed privoxyCrunchLine() {
    return privoxy.parse(new SourceLine("proxy/privoxy.log", offset++, PRIVOXY_CRUNCH, null, null, "h", NOW));
  }

  @Benchmark
  public Parsed squidKnockLine() {
    return squid.parse(new SourceLine("proxy/access.log", offset++, SQUID, "proxy", null, "h", NOW));
  }
}
