package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;
import io.zerorename.committer.store.LocalCommitStore;
import io.zerorename.committer.store.PreconditionFailedException;

/** The fenced protocol on {@code file://}: the local store and a whole job through it. */
class TestLocalStore {
  @TempDir
  Path tmp;

  @Test
  void conditionalPutIsAHardLink() throws Exception {
    LocalCommitStore store = new LocalCommitStore(tmp.resolve("t"));
    String key = tmp.resolve("a/b.json").toString().substring(1);
    store.put(key, "one".getBytes(StandardCharsets.UTF_8), true);
    assertThrows(PreconditionFailedException.class,
        () -> store.put(key, "two".getBytes(StandardCharsets.UTF_8), true));
    assertEquals("one", new String(store.get(key), StandardCharsets.UTF_8));
  }

  @Test
  void aJobOnALocalDestination() throws Exception {
    LocalCommitStore store = new LocalCommitStore(tmp.resolve("t"));
    Path out = tmp.resolve("out");
    FencedLayout layout = new FencedLayout(StoreUrl.parse("file://" + out), "lj", 0);
    FencedStatistics stats = new FencedStatistics();
    StageConfig job = new StageConfig.Builder().store(store).layout(layout).stats(stats)
        .build();
    StoreFencing.Decision d = new SetupJobStage(job).apply(null);
    assertEquals(StoreFencing.Support.ATOMIC, d.support());
    String attempt = Fixture.attemptId(0, 0);
    Path work = Path.of("/" + layout.workDir(attempt), "p=1", "part-0");
    Files.createDirectories(work.getParent());
    Files.write(work, "zero".getBytes(StandardCharsets.UTF_8));
    Files.write(work.resolveSibling(".part-0.crc"), new byte[4]);
    StageConfig task = new StageConfig.Builder().store(store).layout(layout).stats(stats)
        .task(Fixture.taskName(0), attempt, 0).build();
    new CommitTaskStage(task).apply(TaskOutput.scan(task, attempt));
    assertFalse(Files.exists(out.resolve("p=1/part-0")), "visible before job commit");
    assertEquals(1, store.listUploads(layout.destPrefix()).size());
    SuccessData s = new CommitJobStage(job).apply(null);
    assertEquals("zero", Files.readString(out.resolve("p=1/part-0")));
    assertEquals(List.of("file://" + out + "/p=1/part-0"), List.of(s.files().get(0).url()));
    assertTrue(store.listUploads(layout.destPrefix()).isEmpty());
    assertFalse(Files.exists(Path.of("/" + layout.magicRoot())), "work area left behind");
    assertNull(store.head(layout.marker()));
    assertTrue(Files.exists(out.resolve("_SUCCESS")));
  }
}
