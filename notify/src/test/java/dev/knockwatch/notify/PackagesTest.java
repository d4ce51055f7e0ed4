package dev.knockwatch.notify;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.knockwatch.notify.spi.Notifier;

import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The layers of notify, on its main classes: {@code spi} (what a channel needs) at the bottom, the
 * channels beside each other on it, then config (with the registry of receiver types), the
 * pipeline's stages, and the dispatcher that composes them at the top. A channel is a package
 * holding a {@link Notifier}.
 */
class PackagesTest {

  static final String NOTIFY = "dev.knockwatch.notify";
  static final JavaClasses CLASSES = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages(NOTIFY);

  static Set<String> channels() {
    Set<String> out = new TreeSet<>();
    CLASSES.stream().filter(c -> !c.isInterface() && c.isAssignableTo(Notifier.class)).map(JavaClass::getPackageName)
        .forEach(out::add);
    return out;
  }

  /** One slice per package, notify's own too (which "dev.knockwatch.notify.(**)" would leave out). */
  @Test
  void noPackageOfNotifyImportsOneThatImportsItBack() {
    slices().matching("dev.knockwatch.(**)").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void noChannelImportsAnotherChannel() {
    assertThat(channels()).as("the channels found").contains(NOTIFY + ".slack", NOTIFY + ".console");
    for (String channel : channels()) {
      noClasses().that().resideInAPackage(channel + "..").should().dependOnClassesThat()
          .resideInAnyPackage(channels().stream().filter(c -> !c.equals(channel)).map(c -> c + "..").toArray(String[]::new))
          .check(CLASSES);
    }
  }

  @Test
  void aChannelImportsOfNotifyOnlyTheSpi() {
    for (String channel : channels()) {
      noClasses().that().resideInAPackage(channel + "..").should().dependOnClassesThat(resideInAPackage(NOTIFY + "..")
          .and(DescribedPredicate.not(resideInAnyPackage(channel + "..", NOTIFY + ".spi..")))
          .as("are in notify outside " + channel + " and spi"))
          .check(CLASSES);
    }
  }

  /** The registry finds the channels through ServiceLoader: nothing of notify's main code names one. */
  @Test
  void nothingOutsideTheChannelsNamesOne() {
    String[] channels = channels().stream().map(c -> c + "..").toArray(String[]::new);
    noClasses().that().resideOutsideOfPackages(channels).should().dependOnClassesThat().resideInAnyPackage(channels)
        .check(CLASSES);
  }

  @Test
  void theSpiImportsNothingAboveIt() {
    noClasses().that().resideInAPackage(NOTIFY + ".spi..").should().dependOnClassesThat(resideInAPackage(NOTIFY + "..")
        .and(DescribedPredicate.not(resideInAPackage(NOTIFY + ".spi..")))
        .as("are in notify outside spi"))
        .check(CLASSES);
  }
}
