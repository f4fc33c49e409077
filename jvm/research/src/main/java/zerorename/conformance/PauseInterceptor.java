package zerorename.conformance;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Optional;
import java.util.stream.Collectors;

import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;

import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.s3.model.CopyObjectRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;

/**
 * An AWS SDK interceptor (S3A's {@code fs.s3a.audit.execution.interceptors}) that stops its
 * actor before every S3 request, announcing it as {@code KIND KEY [OTHER]}: KIND is the
 * request's name without "Request" (PutObject, ListObjectsV2, CreateMultipartUpload...), KEY
 * its key or prefix, OTHER a copy's source or a bulk delete's further keys (comma-separated).
 *
 * <p>A crash or kill at the pause throws an interruption, which S3A neither retries nor
 * translates into a retryable failure.
 */
public final class PauseInterceptor implements ExecutionInterceptor, Configurable {
  private Configuration conf;
  private String actor = "";
  /** The actor object this filesystem was made for, when made inside one of its calls: a
   *  thread of it still running after the scenario's reset finds it crashed, rather than
   *  stopping a later actor of the same name. */
  private CommitDriver.Actor owner;

  @Override
  public void setConf(Configuration configuration) {
    this.conf = configuration;
    this.actor = configuration.get(S3ACommitDriver.ACTOR, "");
    CommitDriver.Actor making = CommitDriver.constructing();
    if (making == null) {
      making = CommitDriver.current();
    }
    this.owner = making != null && making.name.equals(actor) ? making : null;
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  static String describe(SdkRequest request) {
    String kind = request.getClass().getSimpleName().replaceAll("Request$", "");
    String key = field(request, "Key").or(() -> field(request, "Prefix")).orElse("");
    String other = "";
    if (request instanceof DeleteObjectsRequest) {
      java.util.List<String> keys = ((DeleteObjectsRequest) request).delete().objects().stream()
          .map(ObjectIdentifier::key).sorted().collect(Collectors.toList());
      key = keys.isEmpty() ? "" : keys.get(0);
      other = String.join(",", keys.subList(Math.min(1, keys.size()), keys.size()));
    } else if (request instanceof CopyObjectRequest) {
      CopyObjectRequest copy = (CopyObjectRequest) request;
      key = copy.sourceKey();
      other = copy.destinationKey();
    }
    return kind + "\t" + key + (other.isEmpty() ? "" : "\t" + other);
  }

  private static Optional<String> field(SdkRequest request, String name) {
    return request.getValueForField(name, String.class);
  }

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    if (actor.isEmpty()) {
      return;
    }
    try {
      // the owner, unless a later scenario's actor of the same name has the filesystem now
      // (S3ACommitDriver keeps an actor's filesystem across scenarios; a reset first waits
      // for the ended scenario's threads): then that actor, by name
      CommitDriver.Actor now = CommitDriver.registered(actor);
      if (owner != null && (now == null || now == owner)) {
        CommitDriver.before(owner, describe(context.request()));
      } else {
        CommitDriver.before(actor, describe(context.request()));
      }
    } catch (IOException e) {
      InterruptedIOException stop = e instanceof InterruptedIOException
          ? (InterruptedIOException) e : new InterruptedIOException(e.getMessage());
      if (stop != e) {
        stop.initCause(e);
      }
      throw SdkClientException.builder().message(e.getMessage()).cause(stop).build();
    }
  }
}
