---------------------------- MODULE StreamCommit ----------------------------
(***************************************************************************)
(* The batch-record protocol of zerorename's stream sink                   *)
(* (reference/zerorename/spark/streaming.py), with Spark's micro-batch     *)
(* driver around it.  The driver runs batches 0..Batches-1; for each, its  *)
(* Tasks tasks upload one file each (an uncompleted multipart upload), in  *)
(* any order, the sink creates the batch record naming them (the commit    *)
(* point), completes the recorded uploads one by one, aborts every other   *)
(* upload of the batch (its own, or those of runs that crashed before      *)
(* recording), and Spark then writes the batch to its commit log.  The     *)
(* driver may crash between any two steps (between two tasks' uploads,     *)
(* between two completes); the next run re-runs the first batch missing    *)
(* from the commit log, with the same batch id.                            *)
(*                                                                         *)
(* Conditional = TRUE: the record is created with If-None-Match: *, so a   *)
(* re-run leaves it as it is.  FALSE: a plain PUT, which a re-run          *)
(* overwrites (the broken sink the checks must catch).                     *)
(* RollForward = TRUE: a re-run completes what the record names, whoever   *)
(* wrote it.  FALSE: only its own uploads (a broken sink that leaves a     *)
(* commit that died between two completes unfinished).                    *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS Batches, Tasks, MaxCrashes, Conditional, RollForward

Ids == 0..(Batches - 1)
TaskIds == 0..(Tasks - 1)
Runs == 0..MaxCrashes
NoRecord == MaxCrashes + 1

VARIABLES run, batch, pc, commitLog, uploads, published, record, crashes

vars == <<run, batch, pc, commitLog, uploads, published, record, crashes>>

TypeOK ==
    /\ run \in Runs /\ crashes \in 0..MaxCrashes
    /\ batch \in 0..Batches
    /\ pc \in {"write", "record", "publish", "clean", "spark"}
    /\ commitLog \subseteq Ids
    /\ uploads \subseteq (Runs \X Ids \X TaskIds)
    /\ published \subseteq (Runs \X Ids \X TaskIds)
    /\ record \in [Ids -> Runs \cup {NoRecord}]

Init ==
    /\ run = 0 /\ batch = 0 /\ pc = "write" /\ commitLog = {}
    /\ uploads = {} /\ published = {}
    /\ record = [b \in Ids |-> NoRecord] /\ crashes = 0

\* One task of this run uploads its file; when all have, the driver commits.
Write(t) ==
    /\ batch < Batches /\ pc = "write"
    /\ <<run, batch, t>> \notin uploads
    /\ uploads' = uploads \cup {<<run, batch, t>>}
    /\ pc' = IF \A u \in TaskIds \ {t} : <<run, batch, u>> \in uploads
               THEN "record" ELSE "write"
    /\ UNCHANGED <<run, batch, commitLog, published, record, crashes>>

Record ==
    /\ pc = "record"
    /\ IF Conditional /\ record[batch] # NoRecord
         THEN UNCHANGED record                              \* 412: committed before
         ELSE record' = [record EXCEPT ![batch] = run]
    /\ pc' = "publish"
    /\ UNCHANGED <<run, batch, commitLog, uploads, published, crashes>>

\* Complete one recorded upload still pending; when none is, go on.
Publish ==
    /\ pc = "publish"
    /\ LET pending == {w \in uploads : w[1] = record[batch] /\ w[2] = batch
                                       /\ (RollForward \/ w[1] = run)} IN
         IF pending # {}
           THEN \E w \in pending :
                  /\ uploads' = uploads \ {w}
                  /\ published' = published \cup {w}
                  /\ pc' = "publish"
           ELSE /\ pc' = "clean"
                /\ UNCHANGED <<uploads, published>>
    /\ UNCHANGED <<run, batch, commitLog, record, crashes>>

Clean ==
    /\ pc = "clean"
    /\ uploads' = {u \in uploads : u[2] # batch}     \* every run's, of this batch
    /\ pc' = "spark"
    /\ UNCHANGED <<run, batch, commitLog, published, record, crashes>>

SparkCommit ==
    /\ pc = "spark"
    /\ commitLog' = commitLog \cup {batch}
    /\ batch' = batch + 1
    /\ pc' = "write"
    /\ UNCHANGED <<run, uploads, published, record, crashes>>

\* Spark's commit log holds every batch below the current one, so the restart
\* re-runs the current batch, with the same id.
Crash ==
    /\ batch < Batches /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1 /\ run' = run + 1
    /\ pc' = "write"
    /\ UNCHANGED <<batch, commitLog, uploads, published, record>>

Done == batch = Batches /\ UNCHANGED vars

Next == (\E t \in TaskIds : Write(t)) \/ Record \/ Publish \/ Clean \/ SparkCommit \/ Crash \/ Done

Spec == Init /\ [][Next]_vars

(* A listing reader sees only files a batch record names: nothing of an    *)
(* uncommitted or repeated attempt.                                        *)
ListingCommittedOnly == \A f \in published : record[f[2]] = f[1]

(* A reader of the records sees each batch at most once (one record per    *)
(* batch id, naming one attempt), and once Spark has committed a batch     *)
(* every file its record names is published.                               *)
Committed == \A b \in commitLog : \A t \in TaskIds : <<record[b], b, t>> \in published

(* A reader of the records shows a batch when its record exists and all    *)
(* its files are published: never a part of one, never two attempts'.      *)
LogVisible(b) == record[b] # NoRecord /\ \A t \in TaskIds : <<record[b], b, t>> \in published
OneAttemptPerBatch ==
    \A f, g \in published : f[2] = g[2] => f[1] = g[1]

(* When the query has finished, every batch is visible, and no upload is   *)
(* left pending.                                                           *)
Finished == batch = Batches => (commitLog = Ids /\ uploads = {})
=============================================================================
