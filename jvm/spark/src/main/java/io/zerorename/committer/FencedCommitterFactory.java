package io.zerorename.committer;

import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.zerorename.committer.records.StoreUrl;

/**
 * Binds zerorename's committers into Hadoop and Spark:
 * {@code mapreduce.outputcommitter.factory.scheme.s3a=io.zerorename.committer.FencedCommitterFactory}
 * (with Spark's {@code PathOutputCommitProtocol} and {@code BindingParquetOutputCommitter}).
 *
 * <p>{@value FencedOptions#COMMITTER} picks the committer: {@code fenced} (the default) or
 * {@code auto}: {@code fenced} where the store fences ({@link StoreFencing}), else S3A's magic
 * committer set not to abort other jobs' uploads ({@value FencedOptions#S3A_ABORT_PENDING}
 * {@code =false}). The driver decides once per job and logs why; the reason is written to
 * {@code _SUCCESS} ({@code committer.choice}) and the tasks follow the driver's choice.
 */
public class FencedCommitterFactory extends PathOutputCommitterFactory {
  private static final Logger LOG = LoggerFactory.getLogger(FencedCommitterFactory.class);

  @Override
  public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    Configuration conf = context.getConfiguration();
    String name = conf.getTrimmed(FencedOptions.COMMITTER, FencedOptions.NAME);
    if (name.equalsIgnoreCase(FencedOptions.NAME)) {
      return new FencedCommitter(outputPath, context);
    }
    if (!name.equalsIgnoreCase("auto")) {
      throw new org.apache.hadoop.fs.PathIOException(outputPath.toString(), "unknown "
          + FencedOptions.COMMITTER + "=" + name + ": expected fenced or auto");
    }
    String resolved = conf.getTrimmed(FencedOptions.RESOLVED, "");
    if (resolved.isEmpty()) {
      StoreUrl dest = FencedCommitter.destOf(outputPath);
      StoreFencing.Decision d = StoreFencing.decide(FencedCommitter.storeFor(conf, dest),
          dest.dirPrefix(), conf.getBoolean(FencedOptions.CONDITIONAL_ENABLED, true));
      resolved = d.canFence() ? FencedOptions.NAME : "magic";
      String reason = d.canFence() ? "auto chose fenced: " + d.describe()
          : "auto chose magic, not fenced: " + d.describe() + ", so one conditional PUT "
          + "cannot decide a commit there";
      LOG.info("zerorename: {} (destination {})", reason, outputPath);
      conf.set(FencedOptions.RESOLVED, resolved);
      conf.set(FencedOptions.CHOICE, reason);
    }
    if (resolved.equals(FencedOptions.NAME)) {
      return new FencedCommitter(outputPath, context);
    }
    conf.setBoolean(FencedOptions.S3A_ABORT_PENDING, false);
    return new MagicCommitter(outputPath, context, conf.getTrimmed(FencedOptions.CHOICE, ""));
  }
}
