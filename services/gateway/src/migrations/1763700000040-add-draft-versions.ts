import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `projects.draft_version` grows by one with every saved draft, and a publish now publishes
 * that number: `published_version` is the draft version last published, so the console shows
 * one number for "the draft I saved" and "what runs". Before this, `published_version` counted
 * publishes.
 *
 * Existing rows keep their `published_version` (the services holding copies compiled it and
 * accept only larger ones). Their draft gets that same number when it is the published
 * document, and the next one when it was saved after the last publish (or never published), so
 * a number always names one document and the next publish is never smaller than the last.
 */
export class AddDraftVersions1763700000040 implements MigrationInterface {
  name = 'AddDraftVersions1763700000040';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projects ADD COLUMN draft_version integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`
      UPDATE projects SET draft_version = CASE
        WHEN draft_definition IS NULL THEN published_version
        WHEN published_at IS NULL OR draft_updated_at > published_at THEN published_version + 1
        ELSE published_version
      END`);
    await queryRunner.query(`ALTER TABLE projects ADD CONSTRAINT projects_published_not_ahead_of_draft CHECK (published_version <= draft_version)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projects DROP CONSTRAINT projects_published_not_ahead_of_draft`);
    await queryRunner.query(`ALTER TABLE projects DROP COLUMN draft_version`);
  }
}
