package zerorename.conformance.examples;

import java.io.IOException;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;

/**
 * A deliberately broken committer, for the checks of {@code zerorename check --target hadoop
 * --committer hadoop:<class>} to catch: it publishes a task's files into the destination when
 * the task commits (FileOutputCommitter's algorithm 2, whatever the configuration says), so a
 * job that fails after a task committed leaves that task's output behind, and a job commit is
 * no longer the moment the output appears.  Never use it for anything else.
 */
public class TaskCommitPublishingCommitter extends FileOutputCommitter {
  public TaskCommitPublishingCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    super(outputPath, publishingAtTaskCommit(context));
  }

  private static TaskAttemptContext publishingAtTaskCommit(TaskAttemptContext context) {
    context.getConfiguration().setInt(FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 2);
    return context;
  }
}
