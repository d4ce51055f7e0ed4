package dev.knockwatch.streams.count;

/** Every sliding count test again with the record cache off: the same alerts either way. */
class SlidingCountCacheOffTest extends SlidingCountTest {

  @Override
  long cacheBytes() {
    return 0;
  }
}
