package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One step of the fenced protocol: a function from typed arguments to a typed result, run
 * once ({@link #apply}), timed under its statistic name (the Python reference's stage names),
 * logged on entry and exit at INFO and on failure at ERROR, the failure rethrown.
 *
 * @param <A> arguments
 * @param <R> result
 */
public abstract class AbstractStage<A, R> {
  protected static final Logger LOG = LoggerFactory.getLogger("io.zerorename.committer.stages");

  private final String statistic;
  private final StageConfig config;
  private final String display;
  private final AtomicBoolean applied = new AtomicBoolean();

  protected AbstractStage(String statistic, StageConfig config) {
    this.statistic = statistic;
    this.config = config;
    this.display = config.isTask() ? "[Task-Attempt " + config.attemptId() + "]"
        : "[Job " + config.jobId() + "/" + String.format("%02d", config.jobAttempt()) + "]";
  }

  public final StageConfig config() {
    return config;
  }

  public final String statistic() {
    return statistic;
  }

  /** Run the stage: once per object. */
  public final R apply(A args) throws IOException {
    if (!applied.compareAndSet(false, true)) {
      throw new IllegalStateException(getClass().getSimpleName() + " has already run");
    }
    LOG.debug("{} {}: starting", display, statistic);
    long start = System.nanoTime();
    try {
      R result = executeStage(args);
      long millis = (System.nanoTime() - start) / 1_000_000;
      config.stats().duration(statistic, millis, false);
      LOG.info("{} {}: done in {} ms", display, statistic, millis);
      if (statistic.equals(config.stopAfter())) {
        throw new SimulatedCrashException(statistic);
      }
      return result;
    } catch (SimulatedCrashException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      long millis = (System.nanoTime() - start) / 1_000_000;
      config.stats().duration(statistic, millis, true);
      LOG.error("{} {}: failed after {} ms: {}", display, statistic, millis, e.toString());
      throw e;
    }
  }

  protected abstract R executeStage(A args) throws IOException;

  protected final String url(String key) {
    return config.layout().url(key);
  }
}
