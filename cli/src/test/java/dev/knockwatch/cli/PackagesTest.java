package dev.knockwatch.cli;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * No package of any module uses one that uses it back: every module the launcher's jar holds
 * (events, broker, ingest, streams-app, notify, probes, cli), checked together, so a cycle across
 * modules' packages fails here too. Each module's own PackagesTest holds its layers.
 */
class PackagesTest {

  static final JavaClasses MAIN = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests())
      .importPackages("dev.knockwatch");

  @Test
  void noPackageOfAnyModuleUsesOneThatUsesItBack() {
    slices().matching("dev.knockwatch.(**)").should().beFreeOfCycles().check(MAIN);
  }
}
