package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** How one poll's parse work is shared among threads. */
class ParallelParseTest {

  @Test
  void everyPieceIsWorkedOnceAndOnMoreThanOneThread() {
    try (ParallelParse parse = new ParallelParse(3)) {
      List<Integer> pieces = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        pieces.add(i);
      }
      Map<Integer, AtomicInteger> seen = new ConcurrentHashMap<>();
      Set<String> threads = ConcurrentHashMap.newKeySet();
      String caller = Thread.currentThread().getName();
      CountDownLatch helped = new CountDownLatch(1);
      parse.forEach(pieces, i -> i, false, i -> {
        threads.add(Thread.currentThread().getName());
        seen.computeIfAbsent(i, k -> new AtomicInteger()).incrementAndGet();
        if (Thread.currentThread().getName().equals(caller)) {
          await(helped); // the caller holds its first piece until a helper has taken one
        } else {
          helped.countDown();
        }
      });
      assertThat(seen).hasSize(200).allSatisfy((k, n) -> assertThat(n.get()).isEqualTo(1));
      assertThat(threads).as("a helper worked").anyMatch(name -> name.startsWith("knockwatch-ingest-parse-"));
      assertThat(parse.sharedCalls()).isEqualTo(1);
    }
  }

  @Test
  void aloneOrWithoutHelpersTheCallerWorksEveryPieceInOrder() {
    for (ParallelParse parse : List.of(new ParallelParse(1), new ParallelParse(4))) {
      try (parse) {
        List<Integer> order = new ArrayList<>();
        String caller = Thread.currentThread().getName();
        parse.forEach(List.of(1, 5, 3), i -> i, true, i -> {
          assertThat(Thread.currentThread().getName()).isEqualTo(caller);
          order.add(i);
        });
        assertThat(order).containsExactly(1, 5, 3);
        assertThat(parse.sharedCalls()).isZero();
      }
    }
  }

  @Test
  void longestPiecesAreTakenFirst() {
    try (ParallelParse parse = new ParallelParse(2)) {
      List<Integer> started = new java.util.concurrent.CopyOnWriteArrayList<>();
      // each holds its piece until two have started, so that what a thread records is what it took
      // first (without it, one thread could finish 9 and record 4 before the other recorded 7)
      CountDownLatch firstTwo = new CountDownLatch(2);
      parse.forEach(List.of(1, 9, 4, 7), i -> i, false, i -> {
        started.add(i);
        firstTwo.countDown();
        try {
          firstTwo.await(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      // two threads take from one list: the first two taken are the two longest
      assertThat(started.subList(0, 2)).containsExactlyInAnyOrder(9, 7);
    }
  }

  @Test
  void whatAHelperThrowsIsThrownOnTheCallersThread() {
    try (ParallelParse parse = new ParallelParse(2)) {
      String caller = Thread.currentThread().getName();
      CountDownLatch thrown = new CountDownLatch(1);
      List<Integer> pieces = List.of(1, 2, 3, 4, 5, 6, 7, 8);
      assertThatThrownBy(() -> parse.forEach(pieces, i -> i, false, i -> {
        if (Thread.currentThread().getName().equals(caller)) {
          await(thrown);
        } else {
          thrown.countDown();
          throw new IllegalStateException("a parser's bug on " + i);
        }
      })).isInstanceOf(IllegalStateException.class).hasMessageStartingWith("a parser's bug on");
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(30, TimeUnit.SECONDS)).as("a helper took a piece").isTrue();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
