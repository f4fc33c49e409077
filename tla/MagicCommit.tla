----------------------------- MODULE MagicCommit -----------------------------
(***************************************************************************)
(* The S3A magic committer (paper Section VI.A).  A file written under     *)
(* dest/__magic/jobAttempt/taskAttempt/__base/ becomes a multipart upload  *)
(* to its final key in dest that is not completed; closing the stream PUTs *)
(* a .pending manifest under __magic.  Task commit lists the attempt's     *)
(* .pending files and PUTs one .pendingset per task; job commit lists the  *)
(* .pendingset files and completes their uploads.  Both listings go        *)
(* through the store's index (Section VIII.C: "depends on consistent       *)
(* directory listings").                                                   *)
(***************************************************************************)
EXTENDS Harness

Upload(t, a, f) == <<t, a, f>>
\* __magic/jobAttemptId/taskAttemptId/__base/f.pending (Table III)
PendingFile(t, a, f) == <<"__magic", t, a, f>>
TaskAttemptPath(t, a) == {PendingFile(t, a, f) : f \in Files}
\* savePendingSet(fs, jobAttemptPath + taskId): one name per task
PendingSet(t) == <<"__magic", t>>
JobAttemptPath == {PendingSet(t) : t \in Tasks}

AllUploads == Tasks \X Attempts \X Files
AllKeys == OutKeys \cup JobAttemptPath \cup UNION {TaskAttemptPath(x[1], x[2]) : x \in TA}
AllData == SUBSET AllUploads

\* keys whose lag matters: everything listed or re-read under __magic
\* (the lag of other keys changes no read, so Sync is left out for them)
SyncKeys == JobAttemptPath \cup UNION {TaskAttemptPath(x[1], x[2]) : x \in TA}

Store == INSTANCE ObjectStore WITH Keys <- AllKeys, Data <- AllData, Uploads <- AllUploads

vars == <<storeVars, harnessVars>>

(* Procedure MagicCommitter.setupJob / setupTask: makedirs, implicit here *)

\* the magic output stream uploads the data to the final key, uncompleted
Write(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ Store!StartUpload(Upload(t, a, f), Out(t, f), Bytes(t, a, f))
  /\ UNCHANGED harnessVars

\* close(): save the manifest of the single upload as a .pending file
Close(t, a, f) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ uploads[Upload(t, a, f)].st = "open"
  /\ f \notin wrote[t, a]
  /\ Store!Put(PendingFile(t, a, f), {Upload(t, a, f)})
  /\ wrote' = [wrote EXCEPT ![t, a] = @ \cup {f}]
  /\ UNCHANGED <<pc, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* needsTaskCommit, ask the driver; on permission Procedure
\* MagicCommitter.commitTask: list the .pending files, load each
CommitTask(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "running"
  /\ wrote[t, a] # {}
  /\ \A f \in Files : uploads[Upload(t, a, f)].st = "open" => f \in wrote[t, a]
  /\ IF MayCommit(t, a)
       THEN /\ Grant(t, a)
            /\ todo' = [todo EXCEPT ![t, a] =
                          UNION {Store!Get(k) : k \in Store!List(TaskAttemptPath(t, a))}]
            /\ pc' = [pc EXCEPT ![t, a] = "saving"]
       ELSE Denied(t, a)
  /\ UNCHANGED <<storeVars, wrote, dead, accepted, job, jtodo, snap, faults>>

\* ... savePendingSet: one PUT, so the task commit is atomic
SavePendingSet(t, a) ==
  /\ CanStep(t, a)
  /\ pc[t, a] = "saving"
  /\ Store!Put(PendingSet(t), todo[t, a])
  /\ pc' = [pc EXCEPT ![t, a] = "reporting"]
  /\ UNCHANGED <<wrote, todo, granted, dead, accepted, job, jtodo, snap, faults>>

\* Procedure MagicCommitter.commitJob: list and load the .pendingset files
CommitJob ==
  /\ job = "running"
  /\ AllAccepted
  /\ job' = "committing"
  /\ jtodo' = UNION {Store!Get(k) : k \in Store!List(JobAttemptPath)}
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, snap, faults>>

\* ... completeUpload(p) for each p
CompleteUpload(u) ==
  /\ job = "committing"
  /\ u \in jtodo
  /\ Store!Complete(u)
  /\ jtodo' = jtodo \ {u}
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, job, snap, faults>>

\* commitJob returns (cleanup aborts uploads still pending: invisible)
EndCommitJob ==
  /\ job = "committing"
  /\ jtodo = {}
  /\ job' = "committed"
  /\ snap' = DestView
  /\ UNCHANGED <<storeVars, pc, wrote, todo, granted, dead, accepted, jtodo, faults>>

\* Procedure MagicCommitter.abortJob (and cleanupJob): abort every upload
\* pending under the destination, found with listPendingUploads(destPath)
AbortJob ==
  /\ job = "running"
  /\ Store!AbortAll(Store!ListUploads(OutKeys))
  /\ job' = "aborted"
  /\ UNCHANGED <<pc, wrote, todo, granted, dead, accepted, jtodo, snap, faults>>

Init == Store!Init /\ HarnessInit

Next ==
  \/ DriverNext
  \/ \E t \in Tasks, a \in Attempts :
       \/ CommitTask(t, a) \/ SavePendingSet(t, a)
       \/ \E f \in Files : Write(t, a, f) \/ Close(t, a, f)
  \/ CommitJob \/ EndCommitJob \/ AbortJob
  \/ \E u \in AllUploads : CompleteUpload(u)
  \/ \E k \in SyncKeys : Store!Sync(k) /\ UNCHANGED harnessVars

Spec == Init /\ [][Next]_vars

TypeOK ==
  /\ Store!TypeOK
  /\ HarnessTypeOK
  /\ pc \in [TA -> {"idle", "running", "saving", "reporting", "committed", "stopped"}]
  /\ todo \in [TA -> SUBSET AllUploads]
  /\ jtodo \subseteq AllUploads
==============================================================================
