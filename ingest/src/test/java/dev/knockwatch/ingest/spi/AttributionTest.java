package dev.knockwatch.ingest.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AgentId;
import dev.knockwatch.ingest.Hostile;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent.IdentityClaim;
import org.junit.jupiter.api.Test;

/** docs/TRUST.md, held over hostile claims: the layout decides, a claim never escapes unsafe. */
class AttributionTest {

  static final String ID = "xhfHytmXL-L6RsYw2CrSjA";

  @Test
  void theLayoutWinsAndAClaimThatDisagreesIsKept() {
    assertThat(Attribution.of("dev-bot-71", ID, "knockwatch-guard", "AAAAAAAAAAAAAAAAAAAAAA"))
        .isEqualTo(new Attribution.Attributed("dev-bot-71", ID, new IdentityClaim("knockwatch-guard", "AAAAAAAAAAAAAAAAAAAAAA")));
    assertThat(Attribution.of("dev-bot-71", ID, "dev-bot-71", ID)).isEqualTo(new Attribution.Attributed("dev-bot-71", ID, null));
    assertThat(Attribution.of("dev-bot-71", ID, null, null)).isEqualTo(new Attribution.Attributed("dev-bot-71", ID, null));
  }

  @Test
  void withoutALayoutAgentAClaimChoosesNoAgentAndWithoutALayoutCommandTheClaimNamesIt() {
    assertThat(Attribution.of(null, "access", "knockwatch-guard", ID))
        .isEqualTo(new Attribution.Attributed(null, ID, null));
    assertThat(Attribution.of(null, null, null, null)).isEqualTo(new Attribution.Refused(Rejection.MISSING_COMMAND_ID,
        "commandId is missing: the line names none, and the log layout none"));
    assertThat(Attribution.of("a", "short", null, null))
        .isEqualTo(new Attribution.Refused(Rejection.SHORT_COMMAND_ID, "commandId is too short: 5 characters, at least 22 required"));
  }

  @Test
  void hostileLayoutsAndClaimsNeverGiveAnInvalidIdOrAnUnsafeClaim() {
    Hostile h = new Hostile(24);
    String[] layoutAgents = {null, "dev-bot-71", "../../x", "<script>", ".hidden", "a", "x".repeat(129)};
    String[] layoutCommands = {null, ID, "access", "x".repeat(200), "../" + ID};
    for (int i = 0; i < 20_000; i++) {
      String agent = i % 3 == 0 ? h.text() : layoutAgents[h.random().nextInt(layoutAgents.length)];
      String command = i % 5 == 0 ? h.text() : layoutCommands[h.random().nextInt(layoutCommands.length)];
      String claimedAgent = h.random().nextBoolean() ? null : h.text();
      String claimedCommand = h.random().nextInt(4) == 0 ? ID : h.random().nextBoolean() ? null : h.text();
      Attribution.Result r = Attribution.of(agent, command, claimedAgent, claimedCommand);
      if (r instanceof Attribution.Attributed a) {
        assertThat(a.agentId()).as("the layout's agent, valid, or none").isEqualTo(agent);
        if (agent != null) {
          assertThat(AgentId.isValid(agent)).isTrue();
        }
        assertThat(CommandId.isValid(a.commandId())).isTrue();
        assertThat(a.commandId()).isIn(command, claimedCommand);
        if (CommandId.isValid(command)) {
          assertThat(a.commandId()).as("a valid layout id always wins").isEqualTo(command);
        }
        if (a.conflict() != null) {
          for (String claim : new String[] {a.conflict().agentId(), a.conflict().commandId()}) {
            if (claim != null) {
              assertThat(claim.length()).isLessThanOrEqualTo(CommandId.MAX_LENGTH + 1);
              assertThat(Sanitize.isSafe(claim)).as("a claim is kept as safe text").isTrue();
            }
          }
        }
      } else {
        Attribution.Refused refused = (Attribution.Refused) r;
        assertThat(refused.reason()).isNotBlank();
        assertThat(refused.code() == Rejection.BAD_AGENT_ID).isEqualTo(agent != null && !AgentId.isValid(agent));
      }
    }
  }
}
