"""Reading event text: times, people, claims, key phrases, and the annotation that combines
them (SPEC §4, step 2). Pure functions over text; the planners call them."""
