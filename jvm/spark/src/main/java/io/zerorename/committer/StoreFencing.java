package io.zerorename.committer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PreconditionFailedException;
import io.zerorename.committer.store.S3CommitStore;
import io.zerorename.committer.store.StoreRequestException;

/**
 * Can this store fence commits? Measured once per store and JVM, as the Python reference's
 * {@code zerorename.stores.fencing} does: in a throw-away directory of the destination
 * ({@value FencedLayout#PROBE_AREA}), a PUT with {@code If-None-Match: *}, a second one that
 * must be refused, then {@value #RACERS} writers racing on one fresh key for {@value #ROUNDS}
 * rounds: exactly one must win each round, and the object left must hold a winner's bytes.
 * {@code fs.s3a.create.conditional.enabled=false} is honoured without probing. In the same
 * area, whether the store's multipart complete honours {@code If-None-Match: *} too ({@link
 * CommitStore#conditionalComplete}), so that job commit, which completes with the condition,
 * measures nothing after its commit point.
 */
public final class StoreFencing {
  private static final Logger LOG = LoggerFactory.getLogger(StoreFencing.class);
  public static final int RACERS = 16;
  public static final int ROUNDS = 3;

  /** Why a store can or cannot fence (the Python reference's words). */
  public enum Support {
    FENCES("one winner in every round of racing If-None-Match writers"),
    ATOMIC("has conditional writes, atomic by construction or declared by the user"),
    IGNORES_HEADER("accepts a second If-None-Match: * PUT over an existing object"),
    RACY("let two or more racing If-None-Match: * writers succeed on one key"),
    REJECTS_HEADER("does not declare conditional PUT"),
    DISABLED("conditional writes disabled (" + FencedOptions.CONDITIONAL_ENABLED + "=false)");

    private final String words;

    Support(String words) {
      this.words = words;
    }

    public String words() {
      return words;
    }
  }

  /** The measured support and its evidence. */
  public static final class Decision {
    private final String store;
    private final Support support;
    private final int[] winners;

    Decision(String store, Support support, int[] winners) {
      this.store = store;
      this.support = support;
      this.winners = winners;
    }

    public Support support() {
      return support;
    }

    public boolean canFence() {
      return support == Support.FENCES || support == Support.ATOMIC;
    }

    public int maxWinners() {
      return winners == null ? 0 : Arrays.stream(winners).max().orElse(0);
    }

    /** {@code 1 winner x3}: rounds per number of winners. */
    public String histogram() {
      Map<Integer, Integer> counts = new TreeMap<>();
      for (int w : winners) {
        counts.merge(w, 1, Integer::sum);
      }
      List<String> parts = new ArrayList<>();
      for (Map.Entry<Integer, Integer> e : counts.entrySet()) {
        parts.add(e.getKey() + " winner" + (e.getKey() != 1 ? "s" : "") + " x" + e.getValue());
      }
      return String.join(", ", parts);
    }

    /** One line for a log and {@code _SUCCESS}. */
    public String describe() {
      String text = store + " " + support.words();
      if (winners != null) {
        text += " (" + RACERS + " writers, " + winners.length + " rounds: " + histogram() + ")";
      }
      return text;
    }
  }

  private static final Map<String, Decision> CACHE = new ConcurrentHashMap<>();

  private StoreFencing() {
  }

  /** Forget every measured store (tests that reuse a name for another server). */
  public static void clearCache() {
    CACHE.clear();
    S3CommitStore.clearCache();
  }

  /** The decision already measured for this store in this JVM, if any. */
  public static Decision cached(CommitStore store) {
    return CACHE.get(store.name());
  }

  /** Measure (or recall) whether {@code store} fences, probing under {@code destPrefix}. */
  public static synchronized Decision decide(CommitStore store, String destPrefix,
      boolean conditionalEnabled) throws IOException {
    if (!conditionalEnabled) {
      return new Decision(store.name(), Support.DISABLED, null);
    }
    if (store.atomicByConstruction()) {
      return new Decision(store.name(), Support.ATOMIC, null);
    }
    Decision known = CACHE.get(store.name());
    if (known != null) {
      return known;
    }
    Decision d = measure(store, destPrefix + FencedLayout.PROBE_AREA
        + UUID.randomUUID().toString().replace("-", "") + "/");
    LOG.info("zerorename: store check: {}", d.describe());
    CACHE.put(store.name(), d);
    return d;
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Decision measure(CommitStore store, String area) throws IOException {
    String first = area + "fence";
    try {
      store.put(first, text("zerorename fencing probe: first\n"), true);
      try {
        store.put(first, text("zerorename fencing probe: second\n"), true);
        return new Decision(store.name(), Support.IGNORES_HEADER, null);
      } catch (PreconditionFailedException expected) {
        // refused: the store knows the header
      } catch (StoreRequestException e) {
        if (e.rejectsCondition()) {
          return new Decision(store.name(), Support.REJECTS_HEADER, null);
        }
        throw e;
      }
      int[] winners = new int[ROUNDS];
      boolean lost = false;
      ExecutorService pool = Executors.newFixedThreadPool(RACERS);
      try {
        for (int round = 0; round < ROUNDS; round++) {
          String key = area + "race-put_if_none_match-" + round;
          String tag = UUID.randomUUID().toString();
          CyclicBarrier barrier = new CyclicBarrier(RACERS);
          List<Future<byte[]>> results = new ArrayList<>();
          for (int i = 0; i < RACERS; i++) {
            byte[] body = text("zerorename probe race " + tag + " writer "
                + String.format("%03d", i) + "\n");
            results.add(pool.submit(() -> {
              barrier.await(60, TimeUnit.SECONDS);
              try {
                store.put(key, body, true);
                return body;
              } catch (PreconditionFailedException e) {
                return null;
              }
            }));
          }
          List<byte[]> won = new ArrayList<>();
          for (Future<byte[]> f : results) {
            byte[] b;
            try {
              b = f.get();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new java.io.InterruptedIOException("interrupted during the store check");
            } catch (java.util.concurrent.ExecutionException e) {
              throw new IOException("the fencing probe's racing writer failed: "
                  + e.getCause(), e.getCause());
            }
            if (b != null) {
              won.add(b);
            }
          }
          winners[round] = won.size();
          byte[] finalBytes = store.get(key);
          boolean held = false;
          for (byte[] b : won) {
            held |= Arrays.equals(b, finalBytes);
          }
          lost |= !won.isEmpty() && !held;
        }
      } finally {
        pool.shutdownNow();
      }
      store.conditionalComplete(area);
      boolean exclusive = Arrays.stream(winners).allMatch(w -> w == 1);
      if (Arrays.stream(winners).anyMatch(w -> w == 0)) {
        throw new IOException("the fencing probe's racing writers all failed in a round on "
            + store.name());
      }
      return new Decision(store.name(), exclusive && !lost ? Support.FENCES : Support.RACY,
          winners);
    } finally {
      try {
        List<String> keys = new ArrayList<>();
        for (ObjectEntry o : store.list(area)) {
          keys.add(o.key());
        }
        if (!keys.isEmpty()) {
          store.delete(keys);
        }
      } catch (IOException e) {
        LOG.warn("zerorename: could not remove the store check's area {}: {}", area,
            e.toString());
      }
    }
  }
}
