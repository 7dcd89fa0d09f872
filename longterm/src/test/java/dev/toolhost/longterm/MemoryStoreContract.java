package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every memory store keeps, run through {@link LongTermMemory} with the real bundled
 * model: written once, subclassed per store (Lucene, PostgreSQL).
 */
abstract class MemoryStoreContract {

  /** Opens the store under test: the same data each time within one test. */
  abstract MemoryStore open();

  /** Removes everything the store keeps, before and after each test. */
  abstract void wipe();

  private static final Owner USER = Owner.of("alice");

  /** A clock the tests move: memories saved one after another get distinct, ordered times. */
  final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));

  private final Clock clock =
      new Clock() {
        @Override
        public ZoneOffset getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return now.get();
        }
      };

  private SwitchableEmbedder embedder;
  private LongTermMemory memory;

  @BeforeEach
  void start() {
    wipe();
    embedder = new SwitchableEmbedder();
    memory = memory(embedder);
  }

  @AfterEach
  void stop() {
    memory.close();
    wipe();
  }

  private LongTermMemory memory(Embedder embedder) {
    return new LongTermMemory(open(), embedder, Duration.ofMillis(200), clock);
  }

  private String save(Owner user, MemoryType type, String content) {
    return save(user, type, content, List.of());
  }

  private String save(Owner user, MemoryType type, String content, List<Association> links) {
    now.set(now.get().plusSeconds(60));
    return memory.save(user, type, content, type.defaultImportance(), Optional.empty(), links).id();
  }

  private List<String> recall(String query, LongTermMemory.Mode mode, Optional<MemoryType> type) {
    return memory.recall(USER, query, 10, type, mode).memories().stream()
        .map(r -> r.memory().content())
        .toList();
  }

  private List<String> hybrid(String query) {
    return recall(query, LongTermMemory.Mode.HYBRID, Optional.empty());
  }

  private void saveHandful() {
    save(USER, MemoryType.PREFERENCE, "The user prefers dark mode in every editor and terminal.");
    save(USER, MemoryType.FACT, "The user's daughter plays the violin in the school orchestra.");
    save(USER, MemoryType.DECISION, "We decided to deploy the billing service on Fridays only.");
    save(USER, MemoryType.EVENT, "Invoice INV-2291 was paid late in March.");
    save(USER, MemoryType.GOAL, "The user wants to run a marathon next spring.");
    save(USER, MemoryType.FACT, "The office coffee machine is broken again.");
  }

  @Test
  void aParaphraseWithNoSharedWordRecallsTheRightMemoryFirst() {
    saveHandful();

    assertThat(hybrid("Which colour scheme does she like for her screens?").getFirst())
        .isEqualTo("The user prefers dark mode in every editor and terminal.");
    assertThat(hybrid("Does her child play any musical instrument?").getFirst())
        .isEqualTo("The user's daughter plays the violin in the school orchestra.");
  }

  @Test
  void anExactRareTokenRanksItsMemoryFirstThroughFullText() {
    saveHandful();
    for (int i = 0; i < 10; i++) {
      save(USER, MemoryType.EVENT, "Invoice INV-" + (3000 + i) + " was paid on time.");
    }

    assertThat(hybrid("INV-2291").getFirst()).isEqualTo("Invoice INV-2291 was paid late in March.");
  }

  @Test
  void aMemoryThatUpdatesAnotherRanksAboveTheOneItUpdates() {
    String old = save(USER, MemoryType.FACT, "The user lives in Lisbon, Portugal.");
    save(USER, MemoryType.FACT, "The office coffee machine is broken again.");
    save(
        USER,
        MemoryType.FACT,
        "Moved house: now based in Porto.",
        List.of(new Association(old, Relation.UPDATES, 0.9)));

    List<String> recalled = hybrid("Where does the user live? Lisbon?");

    assertThat(recalled)
        .containsSubsequence(
            "Moved house: now based in Porto.", "The user lives in Lisbon, Portugal.");
    assertThat(recalled.getFirst()).isEqualTo("Moved house: now based in Porto.");
  }

  @Test
  void aMemoryLinkedToTheBestMatchRanksAboveItsTwinThatIsNot() {
    String launch =
        save(USER, MemoryType.DECISION, "Project Falcon launches on the third of June.");
    save(USER, MemoryType.FACT, "The caterer needs the guest list by Friday.");
    save(
        USER,
        MemoryType.FACT,
        "The caterer needs the guest list by Friday.",
        List.of(new Association(launch, Relation.PART_OF, 0.9)));

    List<LongTermMemory.Recalled> recalled =
        memory
            .recall(
                USER,
                "When does Project Falcon launch?",
                10,
                Optional.empty(),
                LongTermMemory.Mode.HYBRID)
            .memories();

    assertThat(recalled.getFirst().memory().id()).isEqualTo(launch);
    assertThat(recalled.get(1).memory().associations()).isNotEmpty();
    assertThat(recalled.get(1).score()).isGreaterThan(recalled.get(2).score());
  }

  @Test
  void recentListsTheNewestFirst() {
    saveHandful();

    assertThat(recall("", LongTermMemory.Mode.RECENT, Optional.empty()))
        .startsWith(
            "The office coffee machine is broken again.",
            "The user wants to run a marathon next spring.",
            "Invoice INV-2291 was paid late in March.");
  }

  @Test
  void importantListsTheMostImportantFirstAndRecallRaisesImportance() {
    saveHandful();
    save(USER, MemoryType.IDENTITY, "The user's name is Alice Moreau.");

    List<String> important = recall("", LongTermMemory.Mode.IMPORTANT, Optional.empty());
    assertThat(important)
        .containsExactly(
            "The user's name is Alice Moreau.",
            "The user wants to run a marathon next spring.",
            "We decided to deploy the billing service on Fridays only.",
            "The user prefers dark mode in every editor and terminal.",
            "The office coffee machine is broken again.",
            "The user's daughter plays the violin in the school orchestra.",
            "Invoice INV-2291 was paid late in March.");

    // Three months idle halve a fact; recalling one often keeps it above the other.
    now.set(now.get().plus(Duration.ofDays(90)));
    for (int i = 0; i < 3; i++) {
      memory.recall(USER, "violin orchestra", 1, Optional.empty(), LongTermMemory.Mode.HYBRID);
    }
    List<String> later = recall("", LongTermMemory.Mode.IMPORTANT, Optional.of(MemoryType.FACT));
    assertThat(later)
        .containsExactly(
            "The user's daughter plays the violin in the school orchestra.",
            "The office coffee machine is broken again.");
  }

  @Test
  void typedListsOneTypeNewestFirst() {
    saveHandful();

    assertThat(recall("", LongTermMemory.Mode.TYPED, Optional.of(MemoryType.FACT)))
        .containsExactly(
            "The office coffee machine is broken again.",
            "The user's daughter plays the violin in the school orchestra.");
  }

  @Test
  void oneUsersRecallNeverReturnsAnotherUsersMemory() {
    save(Owner.of("bob"), MemoryType.PREFERENCE, "Bob prefers dark mode in every editor.");
    save(Owner.of("bob"), MemoryType.EVENT, "Invoice INV-2291 belongs to Bob.");
    save(USER, MemoryType.FACT, "The office coffee machine is broken again.");
    save(USER, MemoryType.PREFERENCE, "The user likes green tea.");

    for (LongTermMemory.Mode mode : LongTermMemory.Mode.values()) {
      assertThat(
              memory
                  .recall(
                      USER,
                      "dark mode editor INV-2291",
                      50,
                      mode == LongTermMemory.Mode.TYPED
                          ? Optional.of(MemoryType.PREFERENCE)
                          : Optional.empty(),
                      mode)
                  .memories())
          .as(mode.wireName())
          .extracting(r -> r.memory().user())
          .containsOnly(USER.user());
    }
    String bobs =
        memory
            .recall(Owner.of("bob"), "INV-2291", 1, Optional.empty(), LongTermMemory.Mode.HYBRID)
            .memories()
            .getFirst()
            .memory()
            .id();
    assertThat(memory.delete(USER, bobs)).isFalse();
    assertThat(
            memory
                .recall(
                    Owner.of("bob"), "INV-2291", 1, Optional.empty(), LongTermMemory.Mode.HYBRID)
                .memories())
        .isNotEmpty();
  }

  @Test
  void anAgentsMemoriesAreSeenByThatAgentAloneWhileEveryAgentSeesTheUsersOwn() {
    Owner planner = Owner.of("alice", "planner");
    Owner coder = Owner.of("alice", "coder");
    String plans = save(planner, MemoryType.DECISION, "Invoice INV-2291 goes to the auditors.");
    save(coder, MemoryType.FACT, "Invoice INV-2291 was parsed by the coder's script.");
    save(USER, MemoryType.FACT, "Invoice INV-2291 was paid late in March.");

    for (LongTermMemory.Mode mode : LongTermMemory.Mode.values()) {
      Optional<MemoryType> type =
          mode == LongTermMemory.Mode.TYPED ? Optional.of(MemoryType.FACT) : Optional.empty();
      assertThat(memory.recall(planner, "INV-2291 invoice", 50, type, mode).memories())
          .as(mode.wireName())
          .extracting(r -> r.memory().agent())
          .doesNotContain(Optional.of("coder"))
          .contains(Optional.<String>empty());
      assertThat(memory.recall(USER, "INV-2291 invoice", 50, type, mode).memories())
          .as(mode.wireName())
          .extracting(r -> r.memory().agent())
          .containsOnly(Optional.<String>empty());
    }
    assertThat(recalledContents(planner, "INV-2291"))
        .containsExactlyInAnyOrder(
            "Invoice INV-2291 goes to the auditors.", "Invoice INV-2291 was paid late in March.");
    // Another agent, and the user's own client, neither see nor delete the planner's memory.
    assertThat(memory.delete(coder, plans)).isFalse();
    assertThat(memory.delete(USER, plans)).isFalse();
    assertThatThrownBy(
            () ->
                save(
                    coder,
                    MemoryType.FACT,
                    "Linked",
                    List.of(new Association(plans, Relation.UPDATES, 1.0))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(memory.delete(planner, plans)).isTrue();
  }

  private List<String> recalledContents(Owner owner, String query) {
    return memory
        .recall(owner, query, 50, Optional.empty(), LongTermMemory.Mode.HYBRID)
        .memories()
        .stream()
        .map(r -> r.memory().content())
        .toList();
  }

  @Test
  void anAssociationToAnotherUsersMemoryIsRefused() {
    String bobs = save(Owner.of("bob"), MemoryType.FACT, "Bob's secret plan.");

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                save(
                    USER,
                    MemoryType.FACT,
                    "Linked",
                    List.of(new Association(bobs, Relation.RELATED_TO, 0.5))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(bobs);
  }

  @Test
  void aDeletedMemoryIsNeverRecalledAgain() {
    String id = save(USER, MemoryType.FACT, "The user's locker code is 4711.");

    assertThat(memory.delete(USER, id)).isTrue();
    assertThat(memory.delete(USER, id)).isFalse();
    assertThat(hybrid("locker code 4711")).isEmpty();
  }

  @Test
  void aSkillIsReplacedByNameListedByNameAndOutlivesARestart() {
    String memoryId = save(USER, MemoryType.FACT, "The user deploys on Fridays.");
    memory.close();
    Instant saved = Instant.parse("2026-02-01T10:00:00Z");
    try (MemoryStore store = open()) {
      store.saveSkill(new Skill("alice", "zeta-report", "Builds the report.", "1. a", saved));
      store.saveSkill(new Skill("alice", "alpha-deploy", "Deploys.", "1. first draft", saved));
      store.saveSkill(
          new Skill("alice", "alpha-deploy", "Deploys safely.", "1. build\n2. ship", saved));
      store.saveSkill(new Skill("bob", "alpha-deploy", "Bob's way.", "1. yolo", saved));
    }
    try (MemoryStore store = open()) {
      assertThat(store.skills("alice"))
          .extracting(Skill::name)
          .containsExactly("alpha-deploy", "zeta-report");
      assertThat(store.skill("alice", "alpha-deploy"))
          .contains(
              new Skill("alice", "alpha-deploy", "Deploys safely.", "1. build\n2. ship", saved));
      assertThat(store.skill("bob", "alpha-deploy").orElseThrow().content()).isEqualTo("1. yolo");
      assertThat(store.skill("carol", "alpha-deploy")).isEmpty();
      // Skills are not memories: no memory query finds one, and the memory is untouched.
      assertThat(store.all(USER, Optional.empty()))
          .extracting(Memory::id)
          .containsExactly(memoryId);
      assertThat(store.unembedded("no-such-model", 100))
          .extracting(Memory::id)
          .containsExactly(memoryId);
      assertThat(store.deleteSkill("alice", "zeta-report")).isTrue();
      assertThat(store.deleteSkill("alice", "zeta-report")).isFalse();
    }
    try (MemoryStore store = open()) {
      assertThat(store.skills("alice")).extracting(Skill::name).containsExactly("alpha-deploy");
      assertThat(store.skills("bob")).hasSize(1);
    }
    memory = memory(new SwitchableEmbedder());
  }

  @Test
  void memoriesSurviveARestart() {
    saveHandful();
    memory.close();

    memory = memory(new SwitchableEmbedder());

    assertThat(hybrid("Which colour scheme does she like for her screens?").getFirst())
        .isEqualTo("The user prefers dark mode in every editor and terminal.");
    assertThat(recall("", LongTermMemory.Mode.RECENT, Optional.empty())).hasSize(6);
  }

  @Test
  void everyRecallIsRecordedAndTheRecordOutlivesARestart() {
    String id = save(USER, MemoryType.FACT, "The user's locker code is 4711.");
    now.set(now.get().plus(Duration.ofDays(3)));
    Instant recalled = now.get();
    hybrid("locker code");
    hybrid("locker code");
    memory.close();

    try (MemoryStore store = open()) {
      Memory stored = store.get(USER, List.of(id)).getFirst();
      assertThat(stored.accessCount()).isEqualTo(2);
      assertThat(stored.accessedAt()).isEqualTo(recalled);
    }
    memory = memory(new SwitchableEmbedder());
  }

  @Test
  void withTheEmbedderDownSavesSucceedRecallAnswersAndVectorsFollowOnceItIsBack() {
    embedder.failing.set(true);

    LongTermMemory.Saved saved =
        memory.save(
            USER,
            MemoryType.PREFERENCE,
            "The user prefers dark mode in every editor and terminal.",
            0.7,
            Optional.empty(),
            List.of());
    save(USER, MemoryType.EVENT, "Invoice INV-2291 was paid late in March.");

    assertThat(saved.notice()).get().asString().contains("embedder is unavailable");
    LongTermMemory.Recall degraded =
        memory.recall(USER, "INV-2291", 10, Optional.empty(), LongTermMemory.Mode.HYBRID);
    assertThat(degraded.memories().getFirst().memory().content())
        .isEqualTo("Invoice INV-2291 was paid late in March.");
    assertThat(degraded.notice())
        .get()
        .asString()
        .contains("full-text search and associations only");

    embedder.failing.set(false);

    awaitRecallWithoutNotice("dark mode");
    LongTermMemory.Recall whole =
        memory.recall(
            USER,
            "Which colour scheme does she like for her screens?",
            10,
            Optional.empty(),
            LongTermMemory.Mode.HYBRID);
    assertThat(whole.notice()).isEmpty();
    assertThat(whole.memories().getFirst().memory().content())
        .isEqualTo("The user prefers dark mode in every editor and terminal.");
  }

  /** Waits until a hybrid recall of the query says nothing is missing: every memory embedded. */
  private void awaitRecallWithoutNotice(String query) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                memory
                    .recall(USER, query, 1, Optional.empty(), LongTermMemory.Mode.HYBRID)
                    .notice()
                    .isEmpty());
  }

  @Test
  void aNewModelReembedsEveryMemoryWhileFullTextKeepsWorking() {
    saveHandful();
    memory.close();
    SwitchableEmbedder renamed = new SwitchableEmbedder("another-model");
    renamed.failing.set(true);

    memory = memory(renamed);

    LongTermMemory.Recall meanwhile =
        memory.recall(USER, "INV-2291", 10, Optional.empty(), LongTermMemory.Mode.HYBRID);
    assertThat(meanwhile.memories().getFirst().memory().content())
        .isEqualTo("Invoice INV-2291 was paid late in March.");
    assertThat(meanwhile.notice()).isPresent();

    renamed.failing.set(false);
    awaitRecallWithoutNotice("colour scheme for screens");
    assertThat(hybrid("Which colour scheme does she like for her screens?").getFirst())
        .isEqualTo("The user prefers dark mode in every editor and terminal.");
  }
}
