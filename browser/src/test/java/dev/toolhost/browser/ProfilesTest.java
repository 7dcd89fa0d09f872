package dev.toolhost.browser;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.spi.OwnerMark;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One host's profile directories, and what a dead host left. */
class ProfilesTest {

  @TempDir Path dir;

  private Path leftBy(OwnerMark owner, String name) throws Exception {
    Path base = Files.createDirectories(dir.resolve(Profiles.PREFIX + name));
    Files.writeString(base.resolve(Profiles.OWNER), owner.toString());
    Files.createDirectories(base.resolve("toolhost-browser-1/Default"));
    Files.writeString(base.resolve("toolhost-browser-1/Default/Cookies"), "c");
    return base;
  }

  @Test
  void openingDeletesTheProfilesOfADeadHostAndKeepsThoseOfALiveOne() throws Exception {
    OwnerMark self = OwnerMark.current();
    Path dead = leftBy(new OwnerMark(self.pid(), self.startMillis() - 3_600_000), "1");
    Path live = leftBy(self, "2");
    Path unmarked = Files.createDirectories(dir.resolve(Profiles.PREFIX + "3"));
    Path other = Files.createDirectories(dir.resolve("someone-else"));

    try (Profiles profiles = Profiles.open(dir)) {
      assertThat(dead).doesNotExist();
      assertThat(live).exists();
      assertThat(unmarked).exists();
      assertThat(other).exists();
      assertThat(profiles.base().getParent()).isEqualTo(dir);
      assertThat(profiles.base().getFileName().toString()).startsWith(Profiles.PREFIX + self.pid());
      assertThat(Files.readString(profiles.base().resolve(Profiles.OWNER)))
          .isEqualTo(self.toString());
    }
  }

  @Test
  void closingDeletesTheHostsDirectoryWithWhatIsInIt() throws Exception {
    Path base;
    try (Profiles profiles = Profiles.open(dir)) {
      base = profiles.base();
      Files.createDirectories(base.resolve("toolhost-browser-9/Default"));
    }

    assertThat(base).doesNotExist();
  }
}
