package dev.knockwatch.streams.count;

/** Every count test again with the record cache off: the same alerts either way. */
class ThresholdCrossingCacheOffTest extends ThresholdCrossingTest {

  @Override
  long cacheBytes() {
    return 0;
  }
}
