package io.zerorename.committer;

import java.io.IOException;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;

/**
 * Binds zerorename's {@link FencedCommitter} into Hadoop and Spark:
 * {@code mapreduce.outputcommitter.factory.scheme.s3a=io.zerorename.committer.FencedCommitterFactory}
 * (with Spark's {@code PathOutputCommitProtocol} and {@code BindingParquetOutputCommitter}).
 */
public class FencedCommitterFactory extends PathOutputCommitterFactory {

  @Override
  public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    return new FencedCommitter(outputPath, context);
  }
}
