package dev.knockwatch.streams;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * streams-app's packages are layers: each uses only packages below it, so a reader can take them
 * from the bottom up and a detector, a store or a rule key changes one layer. A class that needs one
 * above it belongs higher, or is handed what it needs.
 */
class PackagesTest {

  static final JavaClasses MAIN = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests())
      .importPackages("dev.knockwatch.streams");

  @Test
  void noPackageUsesOneThatUsesItBack() {
    slices().matching("dev.knockwatch.(**)").should().beFreeOfCycles().check(MAIN);
  }

  @Test
  void eachPackageUsesOnlyThoseBelowIt() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        // from the top: the apps' composition (DetectionTopology, TimelineTopology, StreamsApp) and the query API
        .layer("topology").definedBy("dev.knockwatch.streams")
        .layer("api").definedBy("dev.knockwatch.streams.api..")
        // the alert lifecycle, then the detectors (and the processors that run them)
        .layer("lifecycle").definedBy("dev.knockwatch.streams.lifecycle..")
        .layer("detect").definedBy("dev.knockwatch.streams.detect..")
        // the timeline app's parts: discovery reads the timeline's stores
        .layer("discover").definedBy("dev.knockwatch.streams.discover..")
        .layer("timeline").definedBy("dev.knockwatch.streams.timeline..")
        // state and counting: the sliding and aligned counts, the stores and their bytes, the metrics
        .layer("count").definedBy("dev.knockwatch.streams.count..")
        .layer("state").definedBy("dev.knockwatch.streams.state..")
        .layer("metrics").definedBy("dev.knockwatch.streams.metrics..")
        // at the bottom, the rules: what a rule and a detector declare, the policy and its keys
        .layer("rules").definedBy("dev.knockwatch.streams.rules..")
        .whereLayer("topology").mayNotBeAccessedByAnyLayer()
        .whereLayer("api").mayNotBeAccessedByAnyLayer()
        .whereLayer("lifecycle").mayOnlyBeAccessedByLayers("topology")
        .whereLayer("detect").mayOnlyBeAccessedByLayers("topology", "lifecycle")
        .whereLayer("discover").mayOnlyBeAccessedByLayers("topology", "api")
        .whereLayer("timeline").mayOnlyBeAccessedByLayers("topology", "api", "discover")
        .whereLayer("count").mayOnlyBeAccessedByLayers("topology", "lifecycle", "detect", "discover", "timeline")
        .whereLayer("state").mayOnlyBeAccessedByLayers("topology", "lifecycle", "detect", "discover", "timeline", "count")
        .whereLayer("metrics").mayOnlyBeAccessedByLayers("topology", "lifecycle", "detect", "discover", "timeline", "count")
        .whereLayer("rules").mayOnlyBeAccessedByLayers("topology", "api", "lifecycle", "detect", "discover", "timeline",
            "count")
        .check(MAIN);
  }
}
