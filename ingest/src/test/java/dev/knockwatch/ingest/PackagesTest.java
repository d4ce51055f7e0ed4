package dev.knockwatch.ingest;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * ingest's packages: the registry and the agent above the formats, each format in its folder on
 * the interfaces below it ({@code spi/}), so adding one is one folder and one services line.
 */
class PackagesTest {

  static final JavaClasses MAIN = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests())
      .importPackages("dev.knockwatch.ingest");

  @Test
  void noPackageUsesOneThatUsesItBack() {
    slices().matching("dev.knockwatch.(**)").should().beFreeOfCycles().check(MAIN);
  }

  @Test
  void aFormatUsesOnlyTheInterfacesBelowItAndNothingAboveNamesAFormat() {
    noClasses().that().resideInAPackage("dev.knockwatch.ingest.formats..").should().dependOnClassesThat()
        .resideInAnyPackage("dev.knockwatch.ingest", "dev.knockwatch.ingest.tail..", "dev.knockwatch.ingest.config..",
            "dev.knockwatch.ingest.raw..")
        .check(MAIN);
    noClasses().that().resideOutsideOfPackage("dev.knockwatch.ingest.formats..").should().dependOnClassesThat()
        .resideInAPackage("dev.knockwatch.ingest.formats..")
        .because("formats are found through the registry (META-INF/services), never named")
        .check(MAIN);
    noClasses().that().resideInAPackage("dev.knockwatch.ingest.spi..").should().dependOnClassesThat()
        .resideOutsideOfPackages("dev.knockwatch.ingest.spi..", "dev.knockwatch.events..", "java..", "com.fasterxml..")
        .check(MAIN);
  }
}
