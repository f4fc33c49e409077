package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.fs.PathExistsException;
import org.junit.jupiter.api.Test;

import io.zerorename.committer.stages.SetupJobStage;

/** Job setup's HEAD of the destination: sent beside the marker's PUT, and a file refused. */
class TestSetupDestination {

  @Test
  void theDestinationsHeadGoesOutBesideTheMarker() throws Exception {
    Fixture f = new Fixture("j-head");
    List<String> together = List.of("HEAD out", "PUT " + f.layout.marker());
    GatedStore gated = new GatedStore(f.store, together.size(), together::contains);
    new SetupJobStage(f.builder().store(gated).build()).apply(null);
    assertEquals(0, gated.gate.getCount(), "not sent together: " + gated.arrived);
    assertNotNull(f.store.head(f.layout.marker()), "the marker");
  }

  @Test
  void aDestinationThatIsAFileIsRefusedAndKeepsNoMarker() throws Exception {
    Fixture f = new Fixture("j-file");
    byte[] data = "a file, not a directory".getBytes(StandardCharsets.UTF_8);
    f.store.put("out", data, false);
    PathExistsException e = assertThrows(PathExistsException.class,
        () -> new SetupJobStage(f.job()).apply(null));
    assertTrue(e.getMessage().contains("s3a://bucket/out")
        && e.getMessage().contains("not a directory"), e.getMessage());
    assertTrue(f.store.list("out/").isEmpty(), "setup left " + f.store.list("out/"));
    assertEquals("a file, not a directory", f.store.text("out"));
  }

  @Test
  void withOneThreadTheHeadGoesFirstAlone() throws Exception {
    Fixture f = new Fixture("j-one");
    List<String> watched = List.of("HEAD out", "PUT " + f.layout.marker());
    GatedStore recorded = new GatedStore(f.store, 1, watched::contains);  // records, no wait
    new SetupJobStage(f.builder().store(recorded).threads(1).build()).apply(null);
    assertEquals(watched, recorded.arrived);
  }

  @Test
  void withOneThreadAFileIsRefusedBeforeAnythingIsWritten() throws Exception {
    Fixture f = new Fixture("j-one-file");
    f.store.put("out", "a file".getBytes(StandardCharsets.UTF_8), false);
    f.store.requests.clear();
    PathExistsException e = assertThrows(PathExistsException.class,
        () -> new SetupJobStage(f.builder().threads(1).build()).apply(null));
    assertTrue(e.getMessage().contains("not a directory"), e.getMessage());
    assertEquals(Map.of("HEAD", 1), f.store.requests, "the HEAD alone, nothing written");
    assertEquals(List.of("out"), List.copyOf(f.store.objects.keySet()));
    assertTrue(f.store.uploads.isEmpty(), "uploads: " + f.store.uploads.keySet());
  }
}
