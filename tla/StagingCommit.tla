---------------------------- MODULE StagingCommit ----------------------------
(***************************************************************************)
(* The S3A staging ("directory") committer (paper Section VI.1).  A task   *)
(* attempt writes to its local filesystem; task commit uploads every local *)
(* file to its final key as an uncompleted multipart upload, saves the     *)
(* list of uploads (the pendingset) to the cluster filesystem (HDFS) and   *)
(* commits it there with FileOutputCommitter v1, whose task commit renames *)
(* the attempt's directory to clusterJobAttemptPath/taskId.  Job commit    *)
(* reads the committed pendingsets from HDFS and completes their uploads,  *)
(* so no listing of the object store is involved (Section VIII.B).         *)
(***************************************************************************)
EXTENDS Harness

\* the committed pendingsets in clusterJobAttemptPath (HDFS: consistent,
\* atomic rename), one per task; Absent when the task has none
VARIABLE hdfs

Upload(t, a, f) == <<t, a, f>>
AllUploads == Tasks \X Attempts \X Files
AllKeys == OutKeys
AllData == SUBSET AllUploads

\* keys whose lag matters: none, nothing lists or re-reads the store
\* (the lag of other keys changes no read, so Sync is left out for them)
SyncKeys == {}

Store == INSTANCE ObjectStore WITH Keys <- AllKeys, Data <- AllData, Uploads <- AllUploads

vars == <<storeVars, harnessVars, hdfs>>

(* Procedure StagingCommitter.setupJob / setupTask: wrappedCommitter.setupJob,
   localAttemptPath <- uniquePath(localfs, taskAttemptId) *)

\* user code writes f under localAttemptPath (getWorkPath): no store request
Write(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ f \notin wrote[t, a]
  /\ wrote' = [wrote EXCEPT ![t, a] = @ \cup {f}]
  /\ UNCHANGED <<storeVars, pc, todo, granted, dead, accepted, job, jtodo, snap, faults, hdfs>>

\* needsTaskCommit: exists(localfs, localAttemptPath); ask the driver; on
\* permission Procedure StagingCommitter.commitTask lists the local files
CommitTask(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ wrote[t, a] # {}
  /\ IF MayCommit(t, a)
       THEN /\ Grant(t, a)
            /\ todo' = [todo EXCEPT ![t, a] = wrote[t, a]]
            /\ pc' = [pc EXCEPT ![t, a] = "uploading"]
       ELSE Denied(t, a)
  /\ UNCHANGED <<storeVars, wrote, dead, accepted, job, jtodo, snap, faults, hdfs>>

\* ... uploadFileToPendingCommit(f, destPath)
UploadFile(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "uploading"
  /\ f \in todo[t, a]
  /\ Store!StartUpload(Upload(t, a, f), Out(t, f), Bytes(t, a, f))
  /\ todo' = [todo EXCEPT ![t, a] = @ \ {f}]
  /\ UNCHANGED <<pc, wrote, granted, dead, accepted, job, jtodo, snap, faults, hdfs>>

\* ... savePendingSet(clusterfs, clusterTaskAttemptPath, U) and the wrapped
\* v1 commitTask: delete(taskCommittedPath); rename(taskAttemptPath,
\* taskCommittedPath), atomic on HDFS
SavePendingSet(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "uploading"
  /\ todo[t, a] = {}
  /\ hdfs' = [hdfs EXCEPT ![t] = {Upload(t, a, f) : f \in wrote[t, a]}]
  /\ pc' = [pc EXCEPT ![t, a] = "reporting"]
  /\ UNCHANGED <<storeVars, wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* Procedure StagingCommitter.commitJob: load the pendingsets listed in
\* clusterJobAttemptPath (consistent), checkForConflicts (empty destination)
CommitJob ==
  /\ job = "running"
  /\ AllAccepted
  /\ job' = "committing"
  /\ jtodo' = UNION {hdfs[t] : t \in {s \in Tasks : hdfs[s] # Absent}}
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, snap, faults, hdfs>>

\* ... completeUpload(p) for each p
CompleteUpload(u) ==
  /\ job = "committing"
  /\ u \in jtodo
  /\ Store!Complete(u)
  /\ jtodo' = jtodo \ {u}
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, snap, faults, hdfs>>

\* commitJob returns (cleanup aborts uploads still pending: invisible)
EndCommitJob ==
  /\ job = "committing"
  /\ jtodo = {}
  /\ job' = "committed"
  /\ snap' = DestView
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, jtodo, faults, hdfs>>

\* Procedure StagingCommitter.abortJob aborts the uploads of committed
\* pendingsets; cleanupJob aborts every upload listPendingUploads(destPath)
\* finds, a superset: one step
AbortJob ==
  /\ job = "running"
  /\ Store!AbortAll(Store!ListUploads(OutKeys))
  /\ job' = "aborted"
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, jtodo, snap, faults, hdfs>>

Init == Store!Init /\ HarnessInit /\ hdfs = [t \in Tasks |-> Absent]

Next ==
  \/ DriverNext /\ UNCHANGED hdfs
  \/ \E t \in Tasks, a \in Attempts :
       \/ CommitTask(t, a) \/ SavePendingSet(t, a)
       \/ \E f \in Files : Write(t, a, f) \/ UploadFile(t, a, f)
  \/ CommitJob \/ EndCommitJob \/ AbortJob
  \/ \E u \in AllUploads : CompleteUpload(u)
  \/ \E k \in SyncKeys : Store!Sync(k) /\ UNCHANGED <<harnessVars, hdfs>>

Spec == Init /\ [][Next]_vars

TypeOK ==
  /\ Store!TypeOK
  /\ HarnessTypeOK
  /\ pc \in [TA -> {"idle", "running", "uploading", "reporting", "committed", "stopped"}]
  /\ todo \in [TA -> SUBSET Files]
  /\ jtodo \subseteq AllUploads
  /\ hdfs \in [Tasks -> {Absent} \cup SUBSET AllUploads]
==============================================================================
