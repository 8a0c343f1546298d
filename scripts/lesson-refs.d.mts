// Types of scripts/lesson-refs.mjs.
export interface LessonRef {
  section: string;
  file: string;
  title: string;
}
export function lessonRefs(markdown: string): LessonRef[];
export function titleMatches(title: string, name: string): boolean;
export function isContract(file: string): boolean;
