package zerorename.bench;

import java.io.IOException;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;

/**
 * The benchmark's minimal committer for one write:
 * {@code mapreduce.outputcommitter.factory.scheme.s3a=zerorename.bench.MinimalCommitterFactory}
 * with {@code spark.sql.sources.commitProtocolClass=zerorename.bench.MinimalCommitProtocol}.
 */
public class MinimalCommitterFactory extends PathOutputCommitterFactory {
  @Override
  public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    return new MinimalCommitter(outputPath, context);
  }
}
